/* BAD (update order): an OTA write on a handle esp_ota_begin never opened. */
#include <stdint.h>
#include "esp_err.h"
#include "esp_ota_ops.h"

static uint8_t chunk[512];

void app_main(void)
{
    esp_ota_handle_t handle = 0;

    ESP_ERROR_CHECK(esp_ota_write(handle, chunk, sizeof(chunk))); /* expect: E_CALL_MISSING */
}
