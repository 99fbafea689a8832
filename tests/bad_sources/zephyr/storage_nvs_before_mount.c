/* BAD (storage order): an NVS record is written before the file system is mounted. */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/fs/nvs.h>
#include <zephyr/storage/flash_map.h>

static struct nvs_fs fs;
static uint8_t value[16];

int main(void)
{
	ssize_t n;
	int err;

	fs.flash_device = FIXED_PARTITION_DEVICE(storage_partition);
	fs.offset = FIXED_PARTITION_OFFSET(storage_partition);
	fs.sector_size = 4096U;
	fs.sector_count = 2U;
	n = nvs_write(&fs, 1U, value, sizeof(value)); /* expect: E_CALL_ORDER */
	if (n < 0) {
		return (int)n;
	}
	err = nvs_mount(&fs);
	if (err < 0) {
		return err;
	}
	return 0;
}
