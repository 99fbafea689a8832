/* Good Zephyr 4.x app: UART frames sent through a helper taking the device as a parameter, buffers in
 * non-cacheable memory with Zephyr and GNU attribute spellings. Once false alarms: the trailing
 * __attribute__((section(...), aligned(...))), the frame.h C++ guard. */
#include <zephyr/kernel.h>
#include <zephyr/device.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/sys/printk.h>
#include "frame.h"

static uint8_t tx_frame[64] __nocache __aligned(32);
static uint8_t __aligned(32) rx_frame[64];
static uint8_t scratch[32] __attribute__((section(".nocache"), aligned(32)));
static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);

int frame_send(const struct device *uart, const uint8_t *data, uint16_t length)
{
	struct frame_header header = {.kind = 1, .length = length};
	const uint8_t *raw = (const uint8_t *)&header;

	for (size_t i = 0; i < sizeof(header); i++) {
		uart_poll_out(uart, raw[i]);
	}
	for (uint16_t i = 0; i < length; i++) {
		uart_poll_out(uart, data[i]);
	}
	return 0;
}

int main(void)
{
	const struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

	if (!device_is_ready(console) || !gpio_is_ready_dt(&led)) {
		printk("devices not ready\n");
		return 0;
	}
	if (gpio_pin_configure_dt(&led, GPIO_OUTPUT_INACTIVE) < 0) {
		return 0;
	}
	for (size_t i = 0; i < sizeof(tx_frame); i++) {
		tx_frame[i] = (uint8_t)(i + rx_frame[i] + scratch[i % sizeof(scratch)]);
	}
	while (1) {
		if (frame_send(console, tx_frame, sizeof(tx_frame)) < 0) {
			printk("send failed\n");
		}
		if (gpio_pin_toggle_dt(&led) < 0) {
			return 0;
		}
		k_msleep(1000);
	}
	return 0;
}
