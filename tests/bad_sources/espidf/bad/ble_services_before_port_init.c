/* BAD (order): GATT services are counted before the NimBLE port is initialized. */
#include "esp_err.h"
#include "esp_log.h"
#include "nvs_flash.h"
#include "nimble/nimble_port.h"
#include "host/ble_hs.h"

static const struct ble_gatt_svc_def svcs[] = {
    {0},
};

void app_main(void)
{
    ESP_ERROR_CHECK(nvs_flash_init());
    ESP_ERROR_CHECK(ble_gatts_count_cfg(svcs) == 0 ? ESP_OK : ESP_FAIL); /* expect: E_CALL_ORDER */
    ESP_ERROR_CHECK(nimble_port_init());
    ESP_ERROR_CHECK(ble_gatts_add_svcs(svcs) == 0 ? ESP_OK : ESP_FAIL);
}
