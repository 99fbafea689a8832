/* BAD (kernel rules: fallible): an ISR pushes the newest reading to the front of a queue (LIFO) and ignores
 * errQUEUE_FULL: the lost reading goes unnoticed. */
#include <stdint.h>
#include <stdlib.h>
#include "esp_attr.h"
#include "esp_err.h"
#include "freertos/FreeRTOS.h"
#include "freertos/queue.h"
#include "driver/gpio.h"

static QueueHandle_t readings;
static volatile uint32_t sequence;

static void IRAM_ATTR button_isr(void *arg)
{
    (void)arg;
    BaseType_t woken = pdFALSE;
    const uint32_t item = sequence++;
    xQueueSendToFrontFromISR(readings, &item, &woken); /* expect: E_UNCHECKED_RETURN */
    portYIELD_FROM_ISR(woken);
}

void app_main(void)
{
    readings = xQueueCreate(4, sizeof(uint32_t));
    if (readings == NULL) {
        abort();
    }
    ESP_ERROR_CHECK(gpio_install_isr_service(0));
    ESP_ERROR_CHECK(gpio_isr_handler_add(GPIO_NUM_0, button_isr, NULL));
    for (;;) {
        uint32_t got;
        if (xQueueReceive(readings, &got, portMAX_DELAY) == pdTRUE) {
            printf("reading %u\n", (unsigned)got);
        }
    }
}
