/* BAD (sensor rules: fallible): a threshold attribute the driver may refuse (-ENOTSUP, -EINVAL) is set
 * without looking at the result, so the trigger armed next may never fire. */
#include <zephyr/device.h>
#include <zephyr/drivers/sensor.h>
#include <zephyr/kernel.h>

static const struct device *const accel = DEVICE_DT_GET(DT_NODELABEL(ext_accel));

static void handler(const struct device *dev, const struct sensor_trigger *trigger)
{
	ARG_UNUSED(dev);
	ARG_UNUSED(trigger);
}

int main(void)
{
	static const struct sensor_trigger trigger = { .type = SENSOR_TRIG_DELTA, .chan = SENSOR_CHAN_ACCEL_XYZ };
	const struct sensor_value slope = { .val1 = 2, .val2 = 0 };

	if (!device_is_ready(accel)) {
		return 0;
	}
	sensor_attr_set(accel, SENSOR_CHAN_ACCEL_XYZ, SENSOR_ATTR_SLOPE_TH, &slope); /* expect: E_UNCHECKED_RETURN */
	if (sensor_trigger_set(accel, &trigger, handler) < 0) {
		return 0;
	}
	return 0;
}
