/* BAD (check 7): the thread analyzer is called but prj.conf does not enable CONFIG_THREAD_ANALYZER. */
#include <zephyr/kernel.h>
#include <zephyr/debug/thread_analyzer.h>

int main(void)
{
	thread_analyzer_print(0); /* expect: E_KCONFIG_MISSING */
	return 0;
}
