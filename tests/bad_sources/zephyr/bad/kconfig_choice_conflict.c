/* BAD (check 7): prj.conf (support/prj_two_log_modes.conf) selects two members of the LOG_MODE choice.
 * expect: E_KCONFIG_CONFLICT */
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

LOG_MODULE_REGISTER(app);

int main(void)
{
	LOG_INF("hello");
	return 0;
}
