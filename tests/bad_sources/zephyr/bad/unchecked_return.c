/* BAD (check 6): the toggle's error code is discarded. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);

int main(void)
{
	if (!gpio_is_ready_dt(&led) || gpio_pin_configure_dt(&led, GPIO_OUTPUT) < 0) {
		return 0;
	}
	while (1) {
		gpio_pin_toggle_dt(&led); /* expect: E_UNCHECKED_RETURN */
		k_msleep(500);
	}
	return 0;
}
