/* BAD (storage order): a setting is saved before the settings subsystem (and its backend) is initialized. */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/settings/settings.h>

static uint8_t duty[4];

int main(void)
{
	int err = settings_save_one("rac/duty", duty, sizeof(duty)); /* expect: E_CALL_ORDER */

	if (err < 0) {
		return err;
	}
	return settings_subsys_init();
}
