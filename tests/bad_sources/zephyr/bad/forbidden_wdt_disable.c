/* BAD (check 3): the watchdog is disabled after setup. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/watchdog.h>

int main(void)
{
	const struct device *wdt = DEVICE_DT_GET(DT_ALIAS(watchdog0));
	const struct wdt_timeout_cfg cfg = {.window = {.min = 0, .max = 1000}, .flags = WDT_FLAG_RESET_SOC};

	if (!device_is_ready(wdt) || wdt_install_timeout(wdt, &cfg) < 0 || wdt_setup(wdt, 0) < 0) {
		return 0;
	}
	if (wdt_disable(wdt) < 0) { /* expect: E_FORBIDDEN_CALL */
		return 0;
	}
	return 0;
}
