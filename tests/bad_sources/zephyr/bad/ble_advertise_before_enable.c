/* BAD (order): advertising starts before the Bluetooth stack is enabled. */
#include <zephyr/kernel.h>
#include <zephyr/bluetooth/bluetooth.h>
#include <zephyr/bluetooth/gap.h>

static const struct bt_data ad[] = {
	BT_DATA_BYTES(BT_DATA_FLAGS, BT_LE_AD_NO_BREDR),
};

static const struct bt_le_adv_param param = BT_LE_ADV_PARAM_INIT(BT_LE_ADV_OPT_NONE, 0x00a0, 0x00f0, NULL);

int main(void)
{
	int err = bt_le_adv_start(&param, ad, ARRAY_SIZE(ad), NULL, 0); /* expect: E_CALL_ORDER */

	if (err < 0) {
		return err;
	}
	return bt_enable(NULL);
}
