/* BAD (check 2): adc_oneshot_read_mv does not exist (read raw, then adc_cali_raw_to_voltage). */
#include "esp_adc/adc_oneshot.h"
#include "esp_err.h"

void app_main(void)
{
    adc_oneshot_unit_handle_t adc;
    const adc_oneshot_unit_init_cfg_t cfg = {.unit_id = ADC_UNIT_1};
    int mv = 0;

    ESP_ERROR_CHECK(adc_oneshot_new_unit(&cfg, &adc));
    ESP_ERROR_CHECK(adc_oneshot_read_mv(adc, ADC_CHANNEL_0, &mv)); /* expect: E_UNKNOWN_API */
}
