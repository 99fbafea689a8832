/* BAD (kernel rules: Kconfig): a zero-latency direct interrupt is connected, but prj.conf does not enable
 * CONFIG_ZERO_LATENCY_IRQS (the build stops: "ZLI interrupt registered but feature is disabled"). */
#include <zephyr/kernel.h>
#include <zephyr/irq.h>
#include <zephyr/sys/atomic.h>
#include <cmsis_core.h>

static atomic_t runs = ATOMIC_INIT(0);

ISR_DIRECT_DECLARE(fast_isr)
{
	atomic_inc(&runs);
	return 0;
}

int main(void)
{
	IRQ_DIRECT_CONNECT(20, 0, fast_isr, IRQ_ZERO_LATENCY); /* expect: E_KCONFIG_MISSING */
	irq_enable(20);
	for (;;) {
		NVIC_SetPendingIRQ((IRQn_Type)20);
		k_msleep(100);
	}
	return 0;
}
