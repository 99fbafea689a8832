/* Good ESP-IDF v5 app (ESP32-S3): button ISR → queue → task, ADC oneshot with calibration, LEDC PWM,
 * gptimer alarm callback, task watchdog fed from the task. No check must fire on it. */
#include <stdbool.h>
#include <stdint.h>
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "freertos/queue.h"
#include "driver/gpio.h"
#include "driver/ledc.h"
#include "driver/gptimer.h"
#include "esp_adc/adc_oneshot.h"
#include "esp_adc/adc_cali.h"
#include "esp_adc/adc_cali_scheme.h"
#include "esp_task_wdt.h"
#include "esp_err.h"
#include "esp_log.h"

#define BUTTON_GPIO GPIO_NUM_0
#define LED_GPIO GPIO_NUM_48

static const char *TAG = "app";
static QueueHandle_t button_queue;
static volatile uint32_t alarm_count;

static void IRAM_ATTR button_isr(void *arg)
{
    uint32_t pin = (uint32_t)arg;
    BaseType_t woken = pdFALSE;
    if (xQueueSendFromISR(button_queue, &pin, &woken) != pdPASS) {
        alarm_count = 0;
    }
    portYIELD_FROM_ISR(woken);
}

static bool IRAM_ATTR on_alarm(gptimer_handle_t timer, const gptimer_alarm_event_data_t *edata, void *user_ctx)
{
    alarm_count++;
    return false;
}

static void button_task(void *arg)
{
    uint32_t pin;
    ESP_ERROR_CHECK(esp_task_wdt_add(NULL));
    while (true) {
        if (xQueueReceive(button_queue, &pin, pdMS_TO_TICKS(500)) == pdTRUE) {
            ESP_LOGI(TAG, "button on GPIO %u, alarms %u", (unsigned)pin, (unsigned)alarm_count);
        }
        ESP_ERROR_CHECK(esp_task_wdt_reset());
    }
}

void app_main(void)
{
    adc_oneshot_unit_handle_t adc;
    adc_cali_handle_t cali;
    gptimer_handle_t timer;
    int raw = 0;
    int mv = 0;

    const gpio_config_t io = {
        .pin_bit_mask = 1ULL << BUTTON_GPIO,
        .mode = GPIO_MODE_INPUT,
        .pull_up_en = GPIO_PULLUP_ENABLE,
        .intr_type = GPIO_INTR_NEGEDGE,
    };
    ESP_ERROR_CHECK(gpio_config(&io));
    button_queue = xQueueCreate(8, sizeof(uint32_t));
    if (button_queue == NULL) {
        ESP_LOGE(TAG, "no memory for the queue");
        return;
    }
    ESP_ERROR_CHECK(gpio_install_isr_service(0));
    ESP_ERROR_CHECK(gpio_isr_handler_add(BUTTON_GPIO, button_isr, (void *)BUTTON_GPIO));

    const adc_oneshot_unit_init_cfg_t unit_cfg = {.unit_id = ADC_UNIT_1};
    ESP_ERROR_CHECK(adc_oneshot_new_unit(&unit_cfg, &adc));
    const adc_oneshot_chan_cfg_t chan_cfg = {.atten = ADC_ATTEN_DB_12, .bitwidth = ADC_BITWIDTH_DEFAULT};
    ESP_ERROR_CHECK(adc_oneshot_config_channel(adc, ADC_CHANNEL_3, &chan_cfg));
    const adc_cali_curve_fitting_config_t cali_cfg = {
        .unit_id = ADC_UNIT_1, .chan = ADC_CHANNEL_3, .atten = ADC_ATTEN_DB_12, .bitwidth = ADC_BITWIDTH_DEFAULT,
    };
    ESP_ERROR_CHECK(adc_cali_create_scheme_curve_fitting(&cali_cfg, &cali));

    const ledc_timer_config_t ledc_timer = {
        .speed_mode = LEDC_LOW_SPEED_MODE, .duty_resolution = LEDC_TIMER_13_BIT,
        .timer_num = LEDC_TIMER_0, .freq_hz = 5000, .clk_cfg = LEDC_AUTO_CLK,
    };
    ESP_ERROR_CHECK(ledc_timer_config(&ledc_timer));
    const ledc_channel_config_t ledc_channel = {
        .speed_mode = LEDC_LOW_SPEED_MODE, .channel = LEDC_CHANNEL_0, .timer_sel = LEDC_TIMER_0,
        .gpio_num = LED_GPIO, .duty = 0, .hpoint = 0,
    };
    ESP_ERROR_CHECK(ledc_channel_config(&ledc_channel));

    const gptimer_config_t timer_cfg = {
        .clk_src = GPTIMER_CLK_SRC_DEFAULT, .direction = GPTIMER_COUNT_UP, .resolution_hz = 1000000,
    };
    ESP_ERROR_CHECK(gptimer_new_timer(&timer_cfg, &timer));
    const gptimer_event_callbacks_t cbs = {.on_alarm = on_alarm};
    ESP_ERROR_CHECK(gptimer_register_event_callbacks(timer, &cbs, NULL));
    const gptimer_alarm_config_t alarm = {
        .alarm_count = 1000000, .reload_count = 0, .flags.auto_reload_on_alarm = true,
    };
    ESP_ERROR_CHECK(gptimer_set_alarm_action(timer, &alarm));
    ESP_ERROR_CHECK(gptimer_enable(timer));
    ESP_ERROR_CHECK(gptimer_start(timer));

    if (xTaskCreate(button_task, "button", 4096, NULL, 5, NULL) != pdPASS) {
        ESP_LOGE(TAG, "task creation failed");
        return;
    }
    while (true) {
        esp_err_t err = adc_oneshot_read(adc, ADC_CHANNEL_3, &raw);
        if (err == ESP_OK && adc_cali_raw_to_voltage(cali, raw, &mv) == ESP_OK) {
            ESP_LOGI(TAG, "ADC %d mV", mv);
        }
        ESP_ERROR_CHECK(ledc_set_duty(LEDC_LOW_SPEED_MODE, LEDC_CHANNEL_0, (uint32_t)mv & 0x1FFF));
        ESP_ERROR_CHECK(ledc_update_duty(LEDC_LOW_SPEED_MODE, LEDC_CHANNEL_0));
        vTaskDelay(pdMS_TO_TICKS(1000));
    }
}
