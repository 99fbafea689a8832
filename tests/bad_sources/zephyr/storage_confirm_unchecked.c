/* BAD (update order): the running image is confirmed without looking at its state (no self-test gate). */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/dfu/mcuboot.h>

int main(void)
{
	int err = boot_write_img_confirmed(); /* expect: E_CALL_MISSING */

	if (err < 0) {
		return err;
	}
	return 0;
}
