/* BAD (periph rules: ISR fields): an I2C target callback runs in the controller's interrupt, and this one
 * sleeps. */
#include <zephyr/kernel.h>
#include <zephyr/device.h>
#include <zephyr/drivers/i2c.h>

static const struct device *const bus = DEVICE_DT_GET(DT_NODELABEL(i2c1));
static uint8_t last;

static int on_write(struct i2c_target_config *config, uint8_t val)
{
	ARG_UNUSED(config);
	last = val;
	k_msleep(1); /* expect: E_ISR_BLOCKING */
	return 0;
}

static const struct i2c_target_callbacks callbacks = {
	.write_received = on_write,
};

static struct i2c_target_config target = {
	.address = 0x42,
	.callbacks = &callbacks,
};

int main(void)
{
	if (!device_is_ready(bus)) {
		return 0;
	}
	if (i2c_target_register(bus, &target) < 0) {
		return 0;
	}
	return 0;
}
