/* BAD (check 7): SPI is used but the HAL conf header leaves HAL_SPI_MODULE_ENABLED commented out. */
#include "stm32h7xx_hal.h"

SPI_HandleTypeDef hspi1;

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    __HAL_RCC_SPI1_CLK_ENABLE();
    hspi1.Instance = SPI1;
    if (HAL_SPI_Init(&hspi1) != HAL_OK) { /* expect: E_HAL_MODULE_DISABLED */
        return 1;
    }
    return 0;
}
