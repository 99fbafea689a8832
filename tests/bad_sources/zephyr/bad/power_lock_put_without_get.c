/* BAD (check 3): a PM policy lock is released that was never taken. */
#include <zephyr/kernel.h>
#include <zephyr/pm/policy.h>

int main(void)
{
	k_msleep(10);
	pm_policy_state_lock_put(PM_STATE_SUSPEND_TO_IDLE, PM_ALL_SUBSTATES); /* expect: E_CALL_MISSING */
	return 0;
}
