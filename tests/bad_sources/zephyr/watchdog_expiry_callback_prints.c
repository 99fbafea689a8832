/* BAD (ISR rule on .callback): the watchdog's expiry callback runs in its TIMEOUT interrupt, ~2 LFCLK
 * cycles before the reset on nRF, and this one prints there; store a word and print on the next boot. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/watchdog.h>

static const struct device *const wdt = DEVICE_DT_GET(DT_ALIAS(watchdog0));

static void expired(const struct device *dev, int channel_id)
{
	ARG_UNUSED(dev);
	printk("wdt channel %d expiring\n", channel_id); /* expect: E_ISR_LOGGING */
}

int main(void)
{
	const struct wdt_timeout_cfg cfg = {
		.window = { .min = 0U, .max = 2000U },
		.callback = expired,
		.flags = WDT_FLAG_RESET_SOC,
	};
	int channel;

	if (!device_is_ready(wdt)) {
		return 0;
	}
	channel = wdt_install_timeout(wdt, &cfg);
	if (channel < 0 || wdt_setup(wdt, WDT_OPT_PAUSE_HALTED_BY_DBG) < 0) {
		return 0;
	}
	for (;;) {
		if (wdt_feed(wdt, channel) < 0) {
			return 0;
		}
		k_msleep(500);
	}
	return 0;
}
