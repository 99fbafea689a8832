/* BAD (kernel rules: order): items are put to a LIFO that was neither K_LIFO_DEFINE-d nor k_lifo_init-ed. */
#include <zephyr/kernel.h>

struct item {
	void *reserved;
	uint32_t seq;
};

static struct k_lifo items;
static struct item slot;

int main(void)
{
	slot.seq = 1U;
	k_lifo_put(&items, &slot); /* expect: E_CALL_MISSING */
	return 0;
}
