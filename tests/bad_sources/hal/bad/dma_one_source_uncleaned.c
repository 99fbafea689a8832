/* BAD (check 3, cached core): two DMA transmissions; the second buffer is never cleaned. */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart3;
ALIGN_32BYTES(static uint8_t hello[32]);
ALIGN_32BYTES(static uint8_t world[32]);

int main(void)
{
    if (HAL_Init() != HAL_OK || HAL_UART_Init(&huart3) != HAL_OK) {
        return 1;
    }
    SCB_CleanDCache_by_Addr((uint32_t *)hello, sizeof(hello));
    if (HAL_UART_Transmit_DMA(&huart3, hello, sizeof(hello)) != HAL_OK) {
        return 1;
    }
    if (HAL_UART_Transmit_DMA(&huart3, world, sizeof(world)) != HAL_OK) { /* expect: E_CACHE_FLUSH_MISSING */
        return 1;
    }
    return 0;
}
