/* BAD (update order): the app is marked valid without reading its state (no pending-verify check). */
#include "esp_err.h"
#include "esp_ota_ops.h"

void app_main(void)
{
    ESP_ERROR_CHECK(esp_ota_mark_app_valid_cancel_rollback()); /* expect: E_CALL_MISSING */
}
