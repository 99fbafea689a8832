/* BAD (storage order): a file is opened before the LittleFS partition holding it is mounted. */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/fs/fs.h>
#include <zephyr/fs/littlefs.h>
#include <zephyr/storage/flash_map.h>

FS_LITTLEFS_DECLARE_DEFAULT_CONFIG(lfs_data);
static struct fs_mount_t lfs_mount = {
	.type = FS_LITTLEFS,
	.fs_data = &lfs_data,
	.storage_dev = (void *)FIXED_PARTITION_ID(storage_partition),
	.mnt_point = "/lfs",
};

int main(void)
{
	struct fs_file_t file;
	int err;

	fs_file_t_init(&file);
	err = fs_open(&file, "/lfs/boot", FS_O_CREATE | FS_O_WRITE); /* expect: E_CALL_ORDER */
	if (err < 0) {
		return err;
	}
	err = fs_close(&file);
	if (err < 0) {
		return err;
	}
	return fs_mount(&lfs_mount);
}
