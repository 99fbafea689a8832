/* BAD (kernel rules: Kconfig): the task watchdog is used but prj.conf does not enable CONFIG_TASK_WDT. */
#include <zephyr/kernel.h>
#include <zephyr/task_wdt/task_wdt.h>

int main(void)
{
	int channel;

	if (task_wdt_init(NULL) < 0) { /* expect: E_KCONFIG_MISSING */
		return 0;
	}
	channel = task_wdt_add(1000U, NULL, NULL);
	if (channel < 0) {
		return 0;
	}
	for (;;) {
		if (task_wdt_feed(channel) < 0) {
			return 0;
		}
		k_msleep(200);
	}
	return 0;
}
