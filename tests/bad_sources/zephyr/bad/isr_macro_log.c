/* BAD (check 4): a local macro hides printk inside a k_timer expiry function (interrupt context). */
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#define SAY(x) printk(x)

static void expiry(struct k_timer *timer)
{
	SAY("tick\n"); /* expect: E_ISR_LOGGING */
}

K_TIMER_DEFINE(tick, expiry, NULL);

int main(void)
{
	k_timer_start(&tick, K_MSEC(100), K_MSEC(100));
	return 0;
}
