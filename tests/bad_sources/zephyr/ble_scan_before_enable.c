/* BAD (order): scanning starts before the Bluetooth stack is enabled. */
#include <zephyr/kernel.h>
#include <zephyr/bluetooth/bluetooth.h>
#include <zephyr/net_buf.h>

static const struct bt_le_scan_param param =
	BT_LE_SCAN_PARAM_INIT(BT_LE_SCAN_TYPE_PASSIVE, BT_LE_SCAN_OPT_FILTER_DUPLICATE, 0x0060, 0x0030);

static void found(const bt_addr_le_t *addr, int8_t rssi, uint8_t adv_type, struct net_buf_simple *ad)
{
	ARG_UNUSED(addr);
	ARG_UNUSED(adv_type);
	ARG_UNUSED(ad);
	printk("rssi %d\n", rssi);
}

int main(void)
{
	int err = bt_le_scan_start(&param, found); /* expect: E_CALL_ORDER */

	if (err < 0) {
		return err;
	}
	return bt_enable(NULL);
}
