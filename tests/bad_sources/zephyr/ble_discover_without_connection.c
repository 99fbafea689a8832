/* BAD (missing): GATT discovery on a connection the application never created. */
#include <zephyr/kernel.h>
#include <zephyr/bluetooth/bluetooth.h>
#include <zephyr/bluetooth/conn.h>
#include <zephyr/bluetooth/gatt.h>

static struct bt_conn *link;
static struct bt_gatt_discover_params discover;

static uint8_t discovered(struct bt_conn *conn, const struct bt_gatt_attr *attr, struct bt_gatt_discover_params *params)
{
	ARG_UNUSED(conn);
	ARG_UNUSED(params);
	if (attr != NULL) {
		printk("handle 0x%04x\n", attr->handle);
	}
	return BT_GATT_ITER_STOP;
}

int main(void)
{
	int err = bt_enable(NULL);

	if (err < 0) {
		return err;
	}
	discover.func = discovered;
	discover.start_handle = BT_ATT_FIRST_ATTRIBUTE_HANDLE;
	discover.end_handle = BT_ATT_LAST_ATTRIBUTE_HANDLE;
	discover.type = BT_GATT_DISCOVER_PRIMARY;
	return bt_gatt_discover(link, &discover); /* expect: E_CALL_MISSING */
}
