/* BAD (fallible return rule, catalog entry from include/zephyr/drivers/hwinfo.h 0705fe876431): the
 * wake-up cause is only meaningful when the call succeeded, and its result is dropped. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/hwinfo.h>

int main(void)
{
	uint32_t cause = 0U;
	uint32_t wake = 0U;

	if (hwinfo_get_reset_cause(&cause) < 0) {
		return 0;
	}
	if ((cause & RESET_LOW_POWER_WAKE) != 0U) {
		hwinfo_get_wakeup_cause(&wake); /* expect: E_UNCHECKED_RETURN */
		printk("rac: woken (0x%08x)\n", wake);
	}
	if (hwinfo_clear_reset_cause() < 0) {
		return 0;
	}
	return 0;
}
