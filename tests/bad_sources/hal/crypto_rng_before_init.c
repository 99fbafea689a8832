/* BAD (crypto order rule): a random number is drawn through a handle HAL_RNG_Init has not initialized yet. */
#include "stm32h7xx_hal.h"

static RNG_HandleTypeDef hrng;

int main(void)
{
    uint32_t word = 0U;

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    __HAL_RCC_RNG_CLK_ENABLE();
    hrng.Instance = RNG;
    if (HAL_RNG_GenerateRandomNumber(&hrng, &word) != HAL_OK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    return HAL_RNG_Init(&hrng) == HAL_OK ? (int)(word & 1U) : 1;
}
