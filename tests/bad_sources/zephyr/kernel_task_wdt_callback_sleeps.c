/* BAD (kernel rules: ISR registration): the task watchdog callback runs in its timer's interrupt
 * context, and this one sleeps. */
#include <zephyr/kernel.h>
#include <zephyr/task_wdt/task_wdt.h>

static void expired(int channel_id, void *user_data)
{
	ARG_UNUSED(channel_id);
	ARG_UNUSED(user_data);
	k_msleep(10); /* expect: E_ISR_BLOCKING */
}

int main(void)
{
	int channel;

	if (task_wdt_init(NULL) < 0) {
		return 0;
	}
	channel = task_wdt_add(1000U, expired, NULL);
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
