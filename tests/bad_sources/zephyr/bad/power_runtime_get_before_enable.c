/* BAD (check 3): a runtime-PM reference is taken before runtime PM is enabled on the device. */
#include <zephyr/kernel.h>
#include <zephyr/device.h>
#include <zephyr/pm/device_runtime.h>

static const struct device *const bus = DEVICE_DT_GET(DT_NODELABEL(i2c0));

int main(void)
{
	if (!device_is_ready(bus)) {
		return -1;
	}
	if (pm_device_runtime_get(bus) < 0) { /* expect: E_CALL_ORDER */
		return -1;
	}
	if (pm_device_runtime_enable(bus) < 0) {
		return -1;
	}
	return pm_device_runtime_put(bus);
}
