/* BAD (can rules: ISR registration): a receive filter's callback "is called in interrupt context"
 * (can.h), and this one sleeps. */
#include <zephyr/device.h>
#include <zephyr/drivers/can.h>
#include <zephyr/kernel.h>

static const struct device *const can = DEVICE_DT_GET(DT_CHOSEN(zephyr_canbus));

static void received(const struct device *dev, struct can_frame *frame, void *user_data)
{
	ARG_UNUSED(dev);
	ARG_UNUSED(frame);
	ARG_UNUSED(user_data);
	k_msleep(10); /* expect: E_ISR_BLOCKING */
}

int main(void)
{
	const struct can_filter filter = { .id = 0x123U, .mask = CAN_STD_ID_MASK, .flags = 0U };

	if (!device_is_ready(can)) {
		return 0;
	}
	if (can_start(can) < 0) {
		return 0;
	}
	if (can_add_rx_filter(can, received, NULL, &filter) < 0) {
		return 0;
	}
	return 0;
}
