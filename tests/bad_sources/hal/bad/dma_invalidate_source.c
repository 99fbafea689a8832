/* BAD (check 3, cached core): after a memory-to-memory DMA the source is invalidated, not the destination. */
#include "stm32h7xx_hal.h"

DMA_HandleTypeDef hdma;
ALIGN_32BYTES(static uint32_t src[16]);
ALIGN_32BYTES(static uint32_t dst[16]);

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    __HAL_RCC_DMA1_CLK_ENABLE();
    hdma.Instance = DMA1_Stream1;
    hdma.Init.Direction = DMA_MEMORY_TO_MEMORY;
    if (HAL_DMA_Init(&hdma) != HAL_OK) {
        return 1;
    }
    SCB_CleanDCache_by_Addr(src, sizeof(src));
    if (HAL_DMA_Start(&hdma, (uint32_t)src, (uint32_t)dst, 16) != HAL_OK) { /* expect: E_CACHE_INVALIDATE_MISSING */
        return 1;
    }
    if (HAL_DMA_PollForTransfer(&hdma, HAL_DMA_FULL_TRANSFER, 10) != HAL_OK) {
        return 1;
    }
    SCB_InvalidateDCache_by_Addr(src, sizeof(src));
    return (int)dst[0];
}
