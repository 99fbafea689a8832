/* BAD (check 7): led9 is no alias of the board nor of the overlay. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

#define LED_NODE DT_ALIAS(led9) /* expect: E_DT_NODE_MISSING */

static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(LED_NODE, gpios);

int main(void)
{
	if (!gpio_is_ready_dt(&led) || gpio_pin_configure_dt(&led, GPIO_OUTPUT) < 0) {
		return 0;
	}
	return 0;
}
