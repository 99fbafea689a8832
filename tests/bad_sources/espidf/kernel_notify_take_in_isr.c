/* BAD (kernel rules: isr unsafe): a GPIO ISR takes "its" task notification, even without waiting: in an
 * ISR that is the notification of whichever task was interrupted. */
#include <stdint.h>
#include "esp_attr.h"
#include "esp_err.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "driver/gpio.h"

static volatile uint32_t presses;

static void IRAM_ATTR button_isr(void *arg)
{
    (void)arg;
    if (ulTaskNotifyTake(pdTRUE, 0) > 0U) { /* expect: E_ISR_UNSAFE_CALL */
        presses++;
    }
}

void app_main(void)
{
    ESP_ERROR_CHECK(gpio_install_isr_service(0));
    ESP_ERROR_CHECK(gpio_isr_handler_add(GPIO_NUM_0, button_isr, NULL));
    for (;;) {
        vTaskDelay(pdMS_TO_TICKS(1000));
        printf("presses %u\n", (unsigned)presses);
    }
}
