/* BAD (check 4): a gptimer alarm callback (ISR context) logs with ESP_LOGI. */
#include <stdbool.h>
#include "driver/gptimer.h"
#include "esp_err.h"
#include "esp_log.h"

static bool on_alarm(gptimer_handle_t timer, const gptimer_alarm_event_data_t *edata, void *ctx)
{
    ESP_LOGI("timer", "alarm"); /* expect: E_ISR_LOGGING */
    return false;
}

void app_main(void)
{
    gptimer_handle_t timer;
    const gptimer_config_t cfg = {.clk_src = GPTIMER_CLK_SRC_DEFAULT, .direction = GPTIMER_COUNT_UP, .resolution_hz = 1000000};
    const gptimer_event_callbacks_t cbs = {.on_alarm = on_alarm};

    ESP_ERROR_CHECK(gptimer_new_timer(&cfg, &timer));
    ESP_ERROR_CHECK(gptimer_register_event_callbacks(timer, &cbs, NULL));
    ESP_ERROR_CHECK(gptimer_enable(timer));
    ESP_ERROR_CHECK(gptimer_start(timer));
}
