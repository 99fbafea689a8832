/* BAD (can rules: order): the bitrate is set after can_start, when the controller answers -EBUSY. */
#include <zephyr/device.h>
#include <zephyr/drivers/can.h>
#include <zephyr/kernel.h>

static const struct device *const can = DEVICE_DT_GET(DT_CHOSEN(zephyr_canbus));

int main(void)
{
	if (!device_is_ready(can)) {
		return 0;
	}
	if (can_start(can) < 0) { /* expect: E_CALL_ORDER */
		return 0;
	}
	if (can_set_bitrate(can, 500000U) < 0) {
		return 0;
	}
	return 0;
}
