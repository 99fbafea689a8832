/* BAD (order): the connection is created while the explicit scan still runs (conn.h: stop it first). */
#include <zephyr/kernel.h>
#include <zephyr/bluetooth/bluetooth.h>
#include <zephyr/bluetooth/conn.h>
#include <zephyr/net_buf.h>

static struct bt_conn *link;

static void found(const bt_addr_le_t *addr, int8_t rssi, uint8_t adv_type, struct net_buf_simple *ad)
{
	int err;

	ARG_UNUSED(rssi);
	ARG_UNUSED(adv_type);
	ARG_UNUSED(ad);
	err = bt_conn_le_create(addr, BT_CONN_LE_CREATE_CONN, BT_LE_CONN_PARAM_DEFAULT, &link); /* expect: E_CALL_ORDER */
	if (err < 0) {
		return;
	}
	err = bt_le_scan_stop();
	if (err < 0) {
		bt_conn_unref(link);
		link = NULL;
	}
}

int main(void)
{
	int err = bt_enable(NULL);

	if (err < 0) {
		return err;
	}
	return bt_le_scan_start(BT_LE_SCAN_PASSIVE, found);
}
