/* BAD (update order): an image is streamed into slot1 without erasing the bank first. */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/dfu/flash_img.h>
#include <zephyr/dfu/mcuboot.h>

static struct flash_img_context ctx;
static uint8_t chunk[512];

int main(void)
{
	int err = flash_img_init(&ctx);

	if (err < 0) {
		return err;
	}
	err = flash_img_buffered_write(&ctx, chunk, sizeof(chunk), true); /* expect: E_CALL_MISSING */
	if (err < 0) {
		return err;
	}
	return boot_request_upgrade(BOOT_UPGRADE_TEST);
}
