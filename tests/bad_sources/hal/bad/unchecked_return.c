/* BAD (check 6): the HAL status of HAL_UART_Transmit is discarded. */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart3;

int main(void)
{
    static const uint8_t msg[] = "hi\r\n";

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    huart3.Instance = USART3;
    if (HAL_UART_Init(&huart3) != HAL_OK) {
        return 1;
    }
    HAL_UART_Transmit(&huart3, msg, sizeof(msg) - 1, 100); /* expect: E_UNCHECKED_RETURN */
    return 0;
}
