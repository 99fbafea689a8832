/* BAD (storage order): a namespace is opened before NVS is initialized. */
#include "esp_err.h"
#include "nvs.h"
#include "nvs_flash.h"

void app_main(void)
{
    nvs_handle_t handle;

    ESP_ERROR_CHECK(nvs_open("rac", NVS_READWRITE, &handle)); /* expect: E_CALL_ORDER */
    ESP_ERROR_CHECK(nvs_flash_init());
    nvs_close(handle);
}
