/* BAD (check 2): the legacy ADC driver (driver/adc.h) is deprecated in ESP-IDF v5. */
#include "driver/adc.h"
#include "esp_log.h"

void app_main(void)
{
    int raw = adc1_get_raw(ADC1_CHANNEL_0); /* expect: E_DEPRECATED_API */
    ESP_LOGI("app", "raw %d", raw);
}
