/* BAD (check 6): a memory-slab allocation that can fail (-ENOMEM) is used without testing its result. */
#include <zephyr/kernel.h>
#include <string.h>

K_MEM_SLAB_DEFINE_STATIC(pool, 32, 4, 4);

int main(void)
{
	void *block = NULL;

	k_mem_slab_alloc(&pool, &block, K_NO_WAIT); /* expect: E_UNCHECKED_RETURN */
	memset(block, 0, 32);
	k_mem_slab_free(&pool, block);
	return 0;
}
