/* BAD (kernel rules: null_on_failure): the newest command is dropped by discarding what k_lifo_get
 * returns: the item (and the pool block holding it) is lost, and a timed-out wait (NULL) goes unnoticed. */
#include <zephyr/kernel.h>

struct item {
	void *reserved;
	uint32_t seq;
};

K_LIFO_DEFINE(commands);

int main(void)
{
	for (;;) {
		k_lifo_get(&commands, K_MSEC(10)); /* expect: E_UNCHECKED_RETURN */
		k_msleep(100);
	}
	return 0;
}
