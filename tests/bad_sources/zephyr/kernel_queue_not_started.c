/* BAD (kernel rules: order): work is submitted to a dedicated queue that was never started. */
#include <zephyr/kernel.h>

static struct k_work_q queue;

static void handler(struct k_work *work)
{
	ARG_UNUSED(work);
}

K_WORK_DEFINE(job, handler);

int main(void)
{
	k_work_queue_init(&queue);
	for (;;) {
		if (k_work_submit_to_queue(&queue, &job) < 0) { /* expect: E_CALL_MISSING */
			return 0;
		}
		k_msleep(100);
	}
	return 0;
}
