/* BAD (hwinfo order rule): the reset cause is cleared before it is read, so a watchdog reset is never
 * reported (hwinfo_clear_reset_cause wipes the flags hwinfo_get_reset_cause would return). */
#include <zephyr/kernel.h>
#include <zephyr/drivers/hwinfo.h>

int main(void)
{
	uint32_t cause = 0U;

	if (hwinfo_clear_reset_cause() < 0) { /* expect: E_CALL_ORDER */
		return 0;
	}
	if (hwinfo_get_reset_cause(&cause) < 0) {
		return 0;
	}
	printk("rac: wdt %s before this boot\n", (cause & RESET_WATCHDOG) != 0U ? "expired" : "no expiry");
	return 0;
}
