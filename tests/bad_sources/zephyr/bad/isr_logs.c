/* BAD (check 4): a k_timer expiry function (interrupt context) logs. */
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

LOG_MODULE_REGISTER(app);

static void expiry(struct k_timer *timer)
{
	LOG_INF("tick"); /* expect: E_ISR_LOGGING */
}

K_TIMER_DEFINE(tick, expiry, NULL);

int main(void)
{
	k_timer_start(&tick, K_MSEC(100), K_MSEC(100));
	return 0;
}
