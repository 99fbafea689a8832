/* BAD (check 6): the configure result is overwritten by the next call before anyone tests it. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);

int main(void)
{
	int ret;

	if (!gpio_is_ready_dt(&led)) {
		return 0;
	}
	ret = gpio_pin_configure_dt(&led, GPIO_OUTPUT); /* expect: E_UNCHECKED_RETURN */
	ret = gpio_pin_set_dt(&led, 1);
	if (ret < 0) {
		return 0;
	}
	return 0;
}
