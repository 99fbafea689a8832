/* BAD (order): an extended advertising instance is started before it is configured. */
#include <string.h>
#include "esp_log.h"
#include "host/ble_hs.h"

static const char *TAG = "bad";

static int gap_event(struct ble_gap_event *event, void *arg)
{
    (void)event;
    (void)arg;
    return 0;
}

void app_main(void)
{
    struct ble_gap_ext_adv_params params;
    memset(&params, 0, sizeof(params));
    if (ble_gap_ext_adv_start(0, 0, 0) != 0) { /* expect: E_CALL_ORDER */
        ESP_LOGE(TAG, "start");
    }
    if (ble_gap_ext_adv_configure(0, &params, NULL, gap_event, NULL) != 0) {
        ESP_LOGE(TAG, "configure");
    }
}
