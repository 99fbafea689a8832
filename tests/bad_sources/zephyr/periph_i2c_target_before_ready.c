/* BAD (periph rules: order): the I2C target is registered on a controller nobody checked was ready. */
#include <zephyr/kernel.h>
#include <zephyr/device.h>
#include <zephyr/drivers/i2c.h>

static const struct device *const bus = DEVICE_DT_GET(DT_NODELABEL(i2c1));

static const struct i2c_target_callbacks callbacks = {0};

static struct i2c_target_config target = {
	.address = 0x42,
	.callbacks = &callbacks,
};

int main(void)
{
	if (i2c_target_register(bus, &target) < 0) { /* expect: E_CALL_MISSING */
		return 0;
	}
	return 0;
}
