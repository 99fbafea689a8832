/* BAD (check 3): the UART is used without HAL_UART_Init. */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart3;

int main(void)
{
    static const uint8_t msg[] = "hi\r\n";

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    huart3.Instance = USART3;
    if (HAL_UART_Transmit(&huart3, msg, sizeof(msg) - 1, 100) != HAL_OK) { /* expect: E_CALL_MISSING */
        return 1;
    }
    return 0;
}
