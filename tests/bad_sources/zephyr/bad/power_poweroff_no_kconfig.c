/* BAD (check 7): sys_poweroff is called but prj.conf (support/prj.conf) does not enable CONFIG_POWEROFF. */
#include <zephyr/kernel.h>
#include <zephyr/sys/poweroff.h>

int main(void)
{
	printk("off\n");
	sys_poweroff(); /* expect: E_KCONFIG_MISSING */
	return 0;
}
