/* BAD (storage order rule): the sector is erased while the flash control register is still locked. */
#include "stm32h7xx_hal.h"

int main(void)
{
    FLASH_EraseInitTypeDef erase = {0};
    uint32_t sector_error = 0U;

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    erase.TypeErase = FLASH_TYPEERASE_SECTORS;
    erase.Banks = FLASH_BANK_2;
    erase.Sector = FLASH_SECTOR_7;
    erase.NbSectors = 1U;
    erase.VoltageRange = FLASH_VOLTAGE_RANGE_3;
    if (HAL_FLASHEx_Erase(&erase, &sector_error) != HAL_OK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    if (HAL_FLASH_Unlock() != HAL_OK) {
        return 1;
    }
    return HAL_FLASH_Lock() == HAL_OK ? 0 : 1;
}
