/* BAD (check 2): a Zephyr GPIO call in an STM32 HAL application. */
#include "stm32h7xx_hal.h"

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    while (1) {
        if (gpio_pin_toggle_dt(&led) < 0) { /* expect: E_FOREIGN_API */
            return 1;
        }
        HAL_Delay(500);
    }
}
