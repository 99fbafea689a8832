/* BAD (check 7): sdkconfig.defaults (support/sdkconfig_two_levels.defaults) sets two default log levels;
 * the one read last wins, not necessarily the one intended.
 * expect: E_KCONFIG_CONFLICT */
#include "esp_log.h"

void app_main(void)
{
    ESP_LOGI("app", "hello");
}
