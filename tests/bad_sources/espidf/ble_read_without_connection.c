/* BAD (missing): a GATT read on a connection handle the application never opened. */
#include "esp_log.h"
#include "host/ble_hs.h"

static const char *TAG = "bad";

static int on_read(uint16_t conn_handle, const struct ble_gatt_error *error, struct ble_gatt_attr *attr, void *arg)
{
    (void)conn_handle;
    (void)attr;
    (void)arg;
    ESP_LOGI(TAG, "read %d", error->status);
    return 0;
}

void app_main(void)
{
    if (ble_gattc_read(0, 0x0003, on_read, NULL) != 0) { /* expect: E_CALL_MISSING */
        ESP_LOGE(TAG, "read");
    }
}
