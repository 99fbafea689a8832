/* BAD (check 7): printk formats a float but CONFIG_CBPRINTF_FP_SUPPORT is not enabled. */
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

int main(void)
{
	float volts = 3.3f;

	printk("supply %f V\n", (double)volts); /* expect: E_KCONFIG_MISSING */
	return 0;
}
