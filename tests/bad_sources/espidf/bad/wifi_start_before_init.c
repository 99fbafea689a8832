/* BAD (order): the Wi-Fi driver is started before it is initialized. */
#include "esp_err.h"
#include "esp_wifi.h"

void app_main(void)
{
    const wifi_init_config_t cfg = WIFI_INIT_CONFIG_DEFAULT();

    ESP_ERROR_CHECK(esp_wifi_start()); /* expect: E_CALL_ORDER */
    ESP_ERROR_CHECK(esp_wifi_init(&cfg));
}
