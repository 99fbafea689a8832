/* BAD (Kconfig by header): hwinfo needs CONFIG_HWINFO, which this prj.conf does not enable. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/hwinfo.h>

int main(void)
{
	uint32_t cause = 0U;

	if (hwinfo_get_reset_cause(&cause) < 0) { /* expect: E_KCONFIG_MISSING */
		return 0;
	}
	printk("rac: wdt %s before this boot\n", (cause & RESET_WATCHDOG) != 0U ? "expired" : "no expiry");
	if (hwinfo_clear_reset_cause() < 0) {
		return 0;
	}
	return 0;
}
