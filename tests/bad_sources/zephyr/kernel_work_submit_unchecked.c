/* BAD (kernel rules: fallible): a work submission's negative errno is discarded. */
#include <zephyr/kernel.h>

static void handler(struct k_work *work)
{
	ARG_UNUSED(work);
}

K_WORK_DEFINE(job, handler);

int main(void)
{
	for (;;) {
		k_work_submit(&job); /* expect: E_UNCHECKED_RETURN */
		k_msleep(100);
	}
	return 0;
}
