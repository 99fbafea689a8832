/* BAD (kernel rules: order): the timing subsystem is started before it is initialised. */
#include <zephyr/kernel.h>
#include <zephyr/timing/timing.h>

int main(void)
{
	timing_start(); /* expect: E_CALL_ORDER */
	timing_init();
	timing_t start = timing_counter_get();
	timing_t end = timing_counter_get();

	printk("%u cycles\n", (unsigned int)timing_cycles_get(&start, &end));
	timing_stop();
	return 0;
}
