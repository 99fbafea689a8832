/* BAD (order): ble_gap_connect while discovery runs (BLE_HS_EBUSY): cancel discovery first. */
#include <string.h>
#include "esp_log.h"
#include "host/ble_hs.h"

static const char *TAG = "bad";

static int gap_event(struct ble_gap_event *event, void *arg)
{
    (void)arg;
    if (event->type == BLE_GAP_EVENT_DISC) {
        ble_addr_t peer = event->disc.addr;
        int rc = ble_gap_connect(BLE_OWN_ADDR_PUBLIC, &peer, 30000, NULL, gap_event, NULL); /* expect: E_CALL_ORDER */
        if (rc != 0) {
            ESP_LOGW(TAG, "connect %d", rc);
        }
        rc = ble_gap_disc_cancel();
        if (rc != 0) {
            ESP_LOGW(TAG, "cancel %d", rc);
        }
    }
    return 0;
}

void app_main(void)
{
    struct ble_gap_disc_params params;
    memset(&params, 0, sizeof(params));
    if (ble_gap_disc(BLE_OWN_ADDR_PUBLIC, BLE_HS_FOREVER, &params, gap_event, NULL) != 0) {
        ESP_LOGE(TAG, "scan");
    }
}
