/* BAD (check 6): gpio_set_level returns esp_err_t and the result is discarded. */
#include "driver/gpio.h"
#include "esp_err.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

void app_main(void)
{
    ESP_ERROR_CHECK(gpio_set_direction(GPIO_NUM_48, GPIO_MODE_OUTPUT));
    while (1) {
        gpio_set_level(GPIO_NUM_48, 1); /* expect: E_UNCHECKED_RETURN */
        vTaskDelay(pdMS_TO_TICKS(500));
    }
}
