/* BAD (missing): the disconnect handler releases a reference no call ever took (a double release). */
#include <zephyr/kernel.h>
#include <zephyr/bluetooth/bluetooth.h>
#include <zephyr/bluetooth/conn.h>

static struct bt_conn *current;

static void on_connected(struct bt_conn *conn, uint8_t err)
{
	if (err == 0U) {
		current = conn;
	}
}

static void on_disconnected(struct bt_conn *conn, uint8_t reason)
{
	ARG_UNUSED(reason);
	if (conn == current) {
		bt_conn_unref(current); /* expect: E_CALL_MISSING */
		current = NULL;
	}
}

BT_CONN_CB_DEFINE(conn_cb) = {
	.connected = on_connected,
	.disconnected = on_disconnected,
};

int main(void)
{
	return bt_enable(NULL);
}
