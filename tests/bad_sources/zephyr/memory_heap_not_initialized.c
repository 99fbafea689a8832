/* BAD (memory rules: order): a k_heap is allocated from before k_heap_init gave it its memory. */
#include <zephyr/kernel.h>

static struct k_heap frames;

int main(void)
{
	void *block = k_heap_alloc(&frames, 64, K_NO_WAIT); /* expect: E_CALL_MISSING */

	if (block == NULL) {
		return 0;
	}
	k_heap_free(&frames, block);
	return 0;
}
