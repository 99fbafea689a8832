/* BAD (kernel rules: fallible): a submission to an application work queue can fail (-ENODEV before
 * the queue is started, -EBUSY while the item is cancelled), and its result is discarded. */
#include <zephyr/kernel.h>

K_THREAD_STACK_DEFINE(queue_stack, 1024);
static struct k_work_q queue;

static void handler(struct k_work *work)
{
	ARG_UNUSED(work);
}

K_WORK_DEFINE(job, handler);

int main(void)
{
	k_work_queue_init(&queue);
	k_work_queue_start(&queue, queue_stack, K_THREAD_STACK_SIZEOF(queue_stack), 5, NULL);
	for (;;) {
		k_work_submit_to_queue(&queue, &job); /* expect: E_UNCHECKED_RETURN */
		k_msleep(100);
	}
	return 0;
}
