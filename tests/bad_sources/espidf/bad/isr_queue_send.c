/* BAD (check 4): the GPIO ISR uses xQueueSend instead of xQueueSendFromISR. */
#include "freertos/FreeRTOS.h"
#include "freertos/queue.h"
#include "driver/gpio.h"
#include "esp_err.h"

static QueueHandle_t q;

static void IRAM_ATTR on_edge(void *arg)
{
    uint32_t pin = (uint32_t)arg;
    if (xQueueSend(q, &pin, 0) != pdPASS) { /* expect: E_ISR_UNSAFE_CALL */
        return;
    }
}

void app_main(void)
{
    q = xQueueCreate(4, sizeof(uint32_t));
    if (q == NULL) {
        return;
    }
    ESP_ERROR_CHECK(gpio_install_isr_service(0));
    ESP_ERROR_CHECK(gpio_isr_handler_add(GPIO_NUM_0, on_edge, (void *)GPIO_NUM_0));
}
