/* BAD (unused statics): a transmit buffer for a write the code never makes (GCC: 'command_tx'
 * defined but not used, the warning generated i2c_register code had). */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart3;
static uint8_t command_tx[1]; /* expect: E_UNUSED_STATIC */
static uint8_t command_rx[2];

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    huart3.Instance = USART3;
    if (HAL_UART_Init(&huart3) != HAL_OK) {
        return 1;
    }
    if (HAL_UART_Receive(&huart3, command_rx, sizeof(command_rx), 100) != HAL_OK) {
        return 1;
    }
    return 0;
}
