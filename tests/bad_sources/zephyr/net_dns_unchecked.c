/* BAD (returns): the lookup's start is not tested, so a failed start waits for a callback that never comes. */
#include <zephyr/kernel.h>
#include <zephyr/net/dns_resolve.h>

static void result(enum dns_resolve_status status, struct dns_addrinfo *info, void *user_data)
{
	ARG_UNUSED(status);
	ARG_UNUSED(info);
	ARG_UNUSED(user_data);
}

int main(void)
{
	uint16_t id;

	dns_get_addr_info("example.com", DNS_QUERY_TYPE_A, &id, result, NULL, 3000); /* expect: E_UNCHECKED_RETURN */
	return 0;
}
