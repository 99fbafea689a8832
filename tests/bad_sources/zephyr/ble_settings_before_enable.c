/* BAD (order): the Bluetooth settings (bonds) are loaded before bt_enable, which is insufficient. */
#include <zephyr/kernel.h>
#include <zephyr/bluetooth/bluetooth.h>
#include <zephyr/settings/settings.h>

int main(void)
{
	int err = settings_subsys_init();

	if (err < 0) {
		return err;
	}
	err = settings_load(); /* expect: E_CALL_ORDER */
	if (err < 0) {
		return err;
	}
	return bt_enable(NULL);
}
