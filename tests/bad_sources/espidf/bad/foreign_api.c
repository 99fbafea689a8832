/* BAD (check 2): a Zephyr kernel call in an ESP-IDF application. */
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

void app_main(void)
{
    while (1) {
        k_msleep(100); /* expect: E_FOREIGN_API */
    }
}
