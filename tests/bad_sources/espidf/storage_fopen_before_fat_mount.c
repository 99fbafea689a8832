/* BAD (storage order): a file on the FAT volume is opened before the volume is mounted. */
#include <stdio.h>
#include "esp_err.h"
#include "esp_vfs_fat.h"

void app_main(void)
{
    const esp_vfs_fat_mount_config_t config = {.format_if_mount_failed = true, .max_files = 2};
    wl_handle_t handle = WL_INVALID_HANDLE;
    FILE *file = fopen("/fat/boot", "wb"); /* expect: E_CALL_ORDER */

    ESP_ERROR_CHECK(esp_vfs_fat_spiflash_mount_rw_wl("/fat", "storage", &config, &handle));
    if (file != NULL) {
        fclose(file);
    }
    ESP_ERROR_CHECK(esp_vfs_fat_spiflash_unmount_rw_wl("/fat", handle));
}
