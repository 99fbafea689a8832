/* BAD (storage order): a record is appended to a flash circular buffer before fcb_init set it up. */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/fs/fcb.h>
#include <zephyr/storage/flash_map.h>

static struct flash_sector sectors[8];
static struct fcb ring;

int main(void)
{
	struct fcb_entry entry;
	int err;

	ring.f_magic = 0x52414331U;
	ring.f_sectors = sectors;
	ring.f_sector_cnt = 8U;
	err = fcb_append(&ring, 16U, &entry); /* expect: E_CALL_ORDER */
	if (err != 0) {
		return -EIO;
	}
	err = fcb_init(FIXED_PARTITION_ID(storage_partition), &ring);
	return (err != 0) ? -EIO : 0;
}
