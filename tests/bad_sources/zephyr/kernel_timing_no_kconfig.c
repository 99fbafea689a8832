/* BAD (kernel rules: Kconfig): the timing API is used, but prj.conf does not enable CONFIG_TIMING_FUNCTIONS
 * (timing.h declares it only then). */
#include <zephyr/kernel.h>
#include <zephyr/timing/timing.h>

int main(void)
{
	timing_init(); /* expect: E_KCONFIG_MISSING */
	timing_start();
	timing_t start = timing_counter_get();
	timing_t end = timing_counter_get();

	printk("%u cycles\n", (unsigned int)timing_cycles_get(&start, &end));
	timing_stop();
	return 0;
}
