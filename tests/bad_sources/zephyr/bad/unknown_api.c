/* BAD (check 2): gpio_pin_write_dt does not exist in Zephyr (gpio_pin_set_dt does). */
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);

int main(void)
{
	if (!gpio_is_ready_dt(&led) || gpio_pin_configure_dt(&led, GPIO_OUTPUT) < 0) {
		return 0;
	}
	if (gpio_pin_write_dt(&led, 1) < 0) { /* expect: E_UNKNOWN_API */
		return 0;
	}
	return 0;
}
