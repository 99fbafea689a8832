/* BAD (HAL reset-flag order rule): RMVF clears every RCC reset flag, so clearing them before reading
 * RCC_FLAG_IWDG1RST always reports "no expiry". */
#include "stm32h7xx_hal.h"

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    __HAL_RCC_CLEAR_RESET_FLAGS(); /* expect: E_CALL_ORDER */
    if (__HAL_RCC_GET_FLAG(RCC_FLAG_IWDG1RST) != 0U) {
        return 2;
    }
    return 0;
}
