/* BAD (check 3): USART6 is initialized but its clock (__HAL_RCC_USART6_CLK_ENABLE) is never enabled. */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart6;

int main(void)
{
    static const uint8_t msg[] = "hi\r\n";

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    huart6.Instance = USART6; /* expect: E_CLOCK_NOT_ENABLED */
    huart6.Init.BaudRate = 115200;
    if (HAL_UART_Init(&huart6) != HAL_OK) {
        return 1;
    }
    if (HAL_UART_Transmit(&huart6, msg, sizeof(msg) - 1, 100) != HAL_OK) {
        return 1;
    }
    return 0;
}
