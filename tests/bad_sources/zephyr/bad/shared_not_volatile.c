/* BAD (check 5): a flag written by the GPIO callback and polled by main is a plain bool. */
#include <stdbool.h>
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

static const struct gpio_dt_spec button = GPIO_DT_SPEC_GET(DT_ALIAS(sw0), gpios);
static struct gpio_callback cb_data;
static bool pressed;

static void on_press(const struct device *dev, struct gpio_callback *cb, uint32_t pins)
{
	pressed = true; /* expect: E_ISR_SHARED_NOT_VOLATILE */
}

int main(void)
{
	if (!gpio_is_ready_dt(&button) || gpio_pin_configure_dt(&button, GPIO_INPUT) < 0) {
		return 0;
	}
	gpio_init_callback(&cb_data, on_press, BIT(button.pin));
	if (gpio_add_callback_dt(&button, &cb_data) < 0) {
		return 0;
	}
	while (!pressed) {
		k_msleep(10);
	}
	return 0;
}
