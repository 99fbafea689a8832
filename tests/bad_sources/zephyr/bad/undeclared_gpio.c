/* BAD (header model): the GPIO driver API is used, but zephyr/drivers/gpio.h is not included (the
 * defect every generated GPIO app had: "variable has initializer but incomplete type"). */
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios); /* expect: E_UNDECLARED */

int main(void)
{
	if (!gpio_is_ready_dt(&led) || gpio_pin_configure_dt(&led, GPIO_OUTPUT_INACTIVE) < 0) {
		return 0;
	}
	while (1) {
		if (gpio_pin_toggle_dt(&led) < 0) {
			return 0;
		}
		k_msleep(500);
	}
	return 0;
}
