/* BAD (header model): the GPIO driver is called, but driver/gpio.h is not included. */
#include "esp_err.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

void app_main(void)
{
    ESP_ERROR_CHECK(gpio_set_direction(GPIO_NUM_48, GPIO_MODE_OUTPUT)); /* expect: E_UNDECLARED */
    while (1) {
        ESP_ERROR_CHECK(gpio_set_level(GPIO_NUM_48, 1));
        vTaskDelay(pdMS_TO_TICKS(500));
    }
}
