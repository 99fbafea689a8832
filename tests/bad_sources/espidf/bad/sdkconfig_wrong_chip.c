/* BAD (check 7): sdkconfig.defaults (support/sdkconfig_esp32.defaults) targets esp32, the board is an esp32s3.
 * expect: E_SDKCONFIG_TARGET */
#include "esp_log.h"

void app_main(void)
{
    ESP_LOGI("app", "hello");
}
