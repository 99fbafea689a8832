/* BAD (check 7): the overlay (support/shtcx_no_mode.overlay) adds a sensirion,shtcx node without the
 * measure-mode property its binding requires (dts/bindings/sensor/sensirion,shtcx.yaml).
 * expect: E_DT_PROPERTY_MISSING */
#include <zephyr/kernel.h>
#include <zephyr/device.h>

static const struct device *const rh = DEVICE_DT_GET(DT_NODELABEL(rh));

int main(void)
{
	return device_is_ready(rh) ? 0 : -ENODEV;
}
