/* BAD (check 2): HAL_UART_Send does not exist (HAL_UART_Transmit does). */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart3;

int main(void)
{
    static const uint8_t msg[] = "hi\r\n";

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    huart3.Instance = USART3;
    huart3.Init.BaudRate = 115200;
    if (HAL_UART_Init(&huart3) != HAL_OK) {
        return 1;
    }
    if (HAL_UART_Send(&huart3, msg, sizeof(msg) - 1, 100) != HAL_OK) { /* expect: E_UNKNOWN_API */
        return 1;
    }
    return 0;
}
