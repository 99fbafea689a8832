/* BAD (storage order rule): a flash word is programmed before the sector holding it is erased. */
#include "stm32h7xx_hal.h"

static uint32_t word[8] __attribute__((aligned(32)));

int main(void)
{
    FLASH_EraseInitTypeDef erase = {0};
    uint32_t sector_error = 0U;

    if (HAL_Init() != HAL_OK || HAL_FLASH_Unlock() != HAL_OK) {
        return 1;
    }
    if (HAL_FLASH_Program(FLASH_TYPEPROGRAM_FLASHWORD, 0x081E0000UL, (uint32_t)word) != HAL_OK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    erase.TypeErase = FLASH_TYPEERASE_SECTORS;
    erase.Banks = FLASH_BANK_2;
    erase.Sector = FLASH_SECTOR_7;
    erase.NbSectors = 1U;
    erase.VoltageRange = FLASH_VOLTAGE_RANGE_3;
    if (HAL_FLASHEx_Erase(&erase, &sector_error) != HAL_OK) {
        return 1;
    }
    return HAL_FLASH_Lock() == HAL_OK ? 0 : 1;
}
