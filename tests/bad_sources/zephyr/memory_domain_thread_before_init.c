/* BAD (memory rules: order): a thread is added to a memory domain that was never initialised. */
#include <zephyr/kernel.h>

static struct k_mem_domain sandbox;

int main(void)
{
	if (k_mem_domain_add_thread(&sandbox, k_current_get()) < 0) { /* expect: E_CALL_MISSING */
		return 0;
	}
	return 0;
}
