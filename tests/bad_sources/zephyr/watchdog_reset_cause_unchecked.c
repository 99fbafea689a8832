/* BAD (fallible return rule): hwinfo_get_reset_cause returns -ENOSYS where the SoC has no driver, and
 * then `cause` says nothing; the result must be tested before the cause is reported. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/hwinfo.h>

int main(void)
{
	uint32_t cause = 0U;

	hwinfo_get_reset_cause(&cause); /* expect: E_UNCHECKED_RETURN */
	printk("rac: wdt %s before this boot\n", (cause & RESET_WATCHDOG) != 0U ? "expired" : "no expiry");
	if (hwinfo_clear_reset_cause() < 0) {
		return 0;
	}
	return 0;
}
