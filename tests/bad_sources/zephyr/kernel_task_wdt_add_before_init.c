/* BAD (kernel rules: order): a task watchdog channel is added before task_wdt_init set up its timer. */
#include <zephyr/kernel.h>
#include <zephyr/task_wdt/task_wdt.h>

int main(void)
{
	int channel = task_wdt_add(1000U, NULL, NULL); /* expect: E_CALL_ORDER */

	if (channel < 0) {
		return 0;
	}
	if (task_wdt_init(NULL) < 0) {
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
