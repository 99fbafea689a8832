/* BAD (memory rules: Kconfig): memory domains exist only with CONFIG_USERSPACE, which prj.conf does not set. */
#include <zephyr/kernel.h>
#include <zephyr/app_memory/app_memdomain.h>

K_APPMEM_PARTITION_DEFINE(sandbox_part);
static struct k_mem_domain sandbox;

int main(void)
{
	struct k_mem_partition *parts[] = {&sandbox_part};

	if (k_mem_domain_init(&sandbox, ARRAY_SIZE(parts), parts) < 0) { /* expect: E_KCONFIG_MISSING */
		return 0;
	}
	return 0;
}
