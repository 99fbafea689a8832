/* BAD (check 5): a flag set in the EXTI callback and polled by main is not volatile. */
#include "stm32h7xx_hal.h"

static uint8_t button_flag;

void HAL_GPIO_EXTI_Callback(uint16_t GPIO_Pin)
{
    button_flag = 1; /* expect: E_ISR_SHARED_NOT_VOLATILE */
}

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    while (!button_flag) {
    }
    return 0;
}
