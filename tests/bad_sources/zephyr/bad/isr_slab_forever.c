/* BAD (check 4): a timer's expiry function (interrupt context) waits for a slab block with K_FOREVER. */
#include <zephyr/kernel.h>

K_MEM_SLAB_DEFINE_STATIC(pool, 32, 4, 4);
static void *volatile taken;

static void expiry(struct k_timer *timer)
{
	void *block;

	if (k_mem_slab_alloc(&pool, &block, K_FOREVER) == 0) { /* expect: E_ISR_BLOCKING */
		taken = block;
	}
}

K_TIMER_DEFINE(tick, expiry, NULL);

int main(void)
{
	k_timer_start(&tick, K_MSEC(10), K_MSEC(10));
	return 0;
}
