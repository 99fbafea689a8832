/* BAD (periph order rule): listen mode is armed on an I2C handle HAL_I2C_Init has not configured yet. */
#include "stm32h7xx_hal.h"

static I2C_HandleTypeDef hi2c1;

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    __HAL_RCC_I2C1_CLK_ENABLE();
    hi2c1.Instance = I2C1;
    hi2c1.Init.OwnAddress1 = 0x84U;
    if (HAL_I2C_EnableListen_IT(&hi2c1) != HAL_OK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    return HAL_I2C_Init(&hi2c1) == HAL_OK ? 0 : 1;
}
