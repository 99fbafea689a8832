/* BAD (check 4): a counter alarm callback allocates from the heap. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/counter.h>

static void alarm_cb(const struct device *dev, uint8_t chan, uint32_t ticks, void *user_data)
{
	void *sample = k_malloc(16); /* expect: E_ISR_ALLOCATION */

	if (sample != NULL) {
		*(uint32_t *)sample = ticks;
	}
}

int main(void)
{
	const struct device *counter = DEVICE_DT_GET(DT_NODELABEL(rtc0));
	struct counter_alarm_cfg alarm = {.callback = alarm_cb, .ticks = 100};

	if (!device_is_ready(counter) || counter_start(counter) < 0) {
		return 0;
	}
	return counter_set_channel_alarm(counter, 0, &alarm);
}
