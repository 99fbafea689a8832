/* BAD (kernel rules: fallible): a reaction gives a binary semaphore from the ISR and ignores that a give
 * beyond its limit fails (errQUEUE_FULL): the lost event goes unnoticed. */
#include <stdint.h>
#include <stdlib.h>
#include "esp_attr.h"
#include "esp_err.h"
#include "freertos/FreeRTOS.h"
#include "freertos/semphr.h"
#include "driver/gpio.h"

static SemaphoreHandle_t presses;

static void IRAM_ATTR button_isr(void *arg)
{
    (void)arg;
    BaseType_t woken = pdFALSE;
    xSemaphoreGiveFromISR(presses, &woken); /* expect: E_UNCHECKED_RETURN */
    portYIELD_FROM_ISR(woken);
}

void app_main(void)
{
    presses = xSemaphoreCreateBinary();
    if (presses == NULL) {
        abort();
    }
    ESP_ERROR_CHECK(gpio_install_isr_service(0));
    ESP_ERROR_CHECK(gpio_isr_handler_add(GPIO_NUM_0, button_isr, NULL));
    for (;;) {
        if (xSemaphoreTake(presses, portMAX_DELAY) == pdTRUE) {
            printf("press\n");
        }
    }
}
