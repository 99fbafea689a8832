/* BAD (check 3): the GPIO port is used without checking it is ready. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);

int main(void)
{
	if (gpio_pin_configure_dt(&led, GPIO_OUTPUT_ACTIVE) < 0) { /* expect: E_CALL_MISSING */
		return 0;
	}
	return 0;
}
