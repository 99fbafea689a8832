/* BAD (storage order): the FAT volume is unmounted before its wear-levelling handle was mounted. */
#include "esp_err.h"
#include "esp_vfs_fat.h"

void app_main(void)
{
    const esp_vfs_fat_mount_config_t config = {.format_if_mount_failed = true, .max_files = 2};
    wl_handle_t handle = WL_INVALID_HANDLE;

    ESP_ERROR_CHECK(esp_vfs_fat_spiflash_unmount_rw_wl("/fat", handle)); /* expect: E_CALL_ORDER */
    ESP_ERROR_CHECK(esp_vfs_fat_spiflash_mount_rw_wl("/fat", "storage", &config, &handle));
}
