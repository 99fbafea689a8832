/* BAD (check 7): an STM32H7 family header in a project for an STM32F4 target. */
#include "stm32h7xx_hal.h" /* expect: E_HAL_FAMILY_MISMATCH */

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    while (1) {
        HAL_Delay(100);
    }
}
