/* BAD (check 4): a GPIO interrupt callback sleeps to debounce. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

static const struct gpio_dt_spec button = GPIO_DT_SPEC_GET(DT_ALIAS(sw0), gpios);
static struct gpio_callback cb_data;

static void on_press(const struct device *dev, struct gpio_callback *cb, uint32_t pins)
{
	k_msleep(20); /* expect: E_ISR_BLOCKING */
}

int main(void)
{
	if (!gpio_is_ready_dt(&button) || gpio_pin_configure_dt(&button, GPIO_INPUT) < 0) {
		return 0;
	}
	if (gpio_pin_interrupt_configure_dt(&button, GPIO_INT_EDGE_TO_ACTIVE) < 0) {
		return 0;
	}
	gpio_init_callback(&cb_data, on_press, BIT(button.pin));
	return gpio_add_callback_dt(&button, &cb_data);
}
