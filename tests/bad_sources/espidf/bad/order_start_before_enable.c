/* BAD (check 3): gptimer_start is called before gptimer_enable. */
#include "driver/gptimer.h"
#include "esp_err.h"

void app_main(void)
{
    gptimer_handle_t timer;
    const gptimer_config_t cfg = {.clk_src = GPTIMER_CLK_SRC_DEFAULT, .direction = GPTIMER_COUNT_UP, .resolution_hz = 1000000};

    ESP_ERROR_CHECK(gptimer_new_timer(&cfg, &timer));
    ESP_ERROR_CHECK(gptimer_start(timer)); /* expect: E_CALL_ORDER */
    ESP_ERROR_CHECK(gptimer_enable(timer));
}
