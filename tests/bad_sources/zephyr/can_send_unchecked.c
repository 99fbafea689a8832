/* BAD (can rules: fallible): can_send's result (-EAGAIN on timeout, -ENETUNREACH in bus-off) is dropped. */
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
	if (can_start(can) < 0) {
		return 0;
	}
	can_send(can, &frame, K_MSEC(100), NULL, NULL); /* expect: E_UNCHECKED_RETURN */
	return 0;
}
