/* BAD (can rules: order): a frame is sent on a controller that was never started (-ENETDOWN). */
#include <zephyr/device.h>
#include <zephyr/drivers/can.h>
#include <zephyr/kernel.h>

static const struct device *const can = DEVICE_DT_GET(DT_CHOSEN(zephyr_canbus));

int main(void)
{
	const struct can_frame frame = { .id = 0x123U, .dlc = 1U, .data = { 0x01 } };

	if (!device_is_ready(can)) {
		return 0;
	}
	if (can_send(can, &frame, K_MSEC(100), NULL, NULL) < 0) { /* expect: E_CALL_MISSING */
		return 0;
	}
	return 0;
}
