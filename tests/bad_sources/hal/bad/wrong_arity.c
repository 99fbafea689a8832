/* BAD (check 2): HAL_UART_Transmit takes a timeout as its fourth argument. */
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
    if (HAL_UART_Transmit(&huart3, msg, sizeof(msg) - 1) != HAL_OK) { /* expect: E_API_ARITY */
        return 1;
    }
    return 0;
}
