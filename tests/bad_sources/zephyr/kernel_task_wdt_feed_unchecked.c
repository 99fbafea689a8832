/* BAD (kernel rules: fallible): a task watchdog feed's error (-EINVAL: no such channel) is discarded. */
#include <zephyr/kernel.h>
#include <zephyr/task_wdt/task_wdt.h>

int main(void)
{
	int channel;

	if (task_wdt_init(NULL) < 0) {
		return 0;
	}
	channel = task_wdt_add(1000U, NULL, NULL);
	if (channel < 0) {
		return 0;
	}
	for (;;) {
		task_wdt_feed(channel); /* expect: E_UNCHECKED_RETURN */
		k_msleep(200);
	}
	return 0;
}
