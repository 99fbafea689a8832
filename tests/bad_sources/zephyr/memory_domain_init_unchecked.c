/* BAD (memory rules: fallible): the domain's initialisation may fail (-EINVAL, -ENOMEM) and is not tested,
 * so the thread could run without its partition. */
#include <zephyr/kernel.h>
#include <zephyr/app_memory/app_memdomain.h>

K_APPMEM_PARTITION_DEFINE(sandbox_part);
static struct k_mem_domain sandbox;

int main(void)
{
	struct k_mem_partition *parts[] = {&sandbox_part};

	k_mem_domain_init(&sandbox, ARRAY_SIZE(parts), parts); /* expect: E_UNCHECKED_RETURN */
	if (k_mem_domain_add_thread(&sandbox, k_current_get()) < 0) {
		return 0;
	}
	return 0;
}
