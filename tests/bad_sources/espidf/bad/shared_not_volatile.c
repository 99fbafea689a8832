/* BAD (check 5): a counter incremented in an IRAM_ATTR ISR and read by app_main is not volatile. */
#include "driver/gpio.h"
#include "esp_err.h"
#include "esp_log.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

static uint32_t edges;

static void IRAM_ATTR on_edge(void *arg)
{
    edges++; /* expect: E_ISR_SHARED_NOT_VOLATILE */
}

void app_main(void)
{
    ESP_ERROR_CHECK(gpio_install_isr_service(0));
    ESP_ERROR_CHECK(gpio_isr_handler_add(GPIO_NUM_0, on_edge, NULL));
    while (1) {
        ESP_LOGI("app", "edges %u", (unsigned)edges);
        vTaskDelay(pdMS_TO_TICKS(1000));
    }
}
