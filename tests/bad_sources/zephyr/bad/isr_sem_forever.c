/* BAD (check 4): an ISR waits on a semaphore with K_FOREVER. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/uart.h>

K_SEM_DEFINE(room, 1, 1);

static void uart_isr(const struct device *dev, void *user_data)
{
	k_sem_take(&room, K_FOREVER); /* expect: E_ISR_BLOCKING */
}

int main(void)
{
	const struct device *uart = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

	if (!device_is_ready(uart) || uart_irq_callback_user_data_set(uart, uart_isr, NULL) < 0) {
		return 0;
	}
	uart_irq_rx_enable(uart);
	return 0;
}
