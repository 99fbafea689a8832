/* BAD (storage order): a flash area is programmed before the range is erased. */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/storage/flash_map.h>

static uint8_t data[32];

int main(void)
{
	const struct flash_area *area;
	int err = flash_area_open(FIXED_PARTITION_ID(storage_partition), &area);

	if (err < 0) {
		return err;
	}
	err = flash_area_write(area, 0, data, sizeof(data)); /* expect: E_CALL_ORDER */
	if (err < 0) {
		return err;
	}
	err = flash_area_erase(area, 0, 4096U);
	if (err < 0) {
		return err;
	}
	flash_area_close(area);
	return 0;
}
