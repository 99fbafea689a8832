/* BAD (periph rules: Kconfig): target mode is compiled only under CONFIG_I2C_TARGET, which prj.conf lacks. */
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
	if (!device_is_ready(bus)) {
		return 0;
	}
	if (i2c_target_register(bus, &target) < 0) { /* expect: E_KCONFIG_MISSING */
		return 0;
	}
	return 0;
}
