/* BAD (check 4): a mutex is taken in a GPIO interrupt callback. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/gpio.h>

static const struct gpio_dt_spec button = GPIO_DT_SPEC_GET(DT_ALIAS(sw0), gpios);
static struct gpio_callback cb_data;
static volatile int presses;
K_MUTEX_DEFINE(lock);

static void on_press(const struct device *dev, struct gpio_callback *cb, uint32_t pins)
{
	if (k_mutex_lock(&lock, K_NO_WAIT) == 0) { /* expect: E_ISR_UNSAFE_CALL */
		presses++;
	}
}

int main(void)
{
	if (!gpio_is_ready_dt(&button) || gpio_pin_configure_dt(&button, GPIO_INPUT) < 0) {
		return 0;
	}
	gpio_init_callback(&cb_data, on_press, BIT(button.pin));
	return gpio_add_callback_dt(&button, &cb_data) + presses;
}
