/* BAD (check 4): a polling HAL call (it has a Timeout) inside an RX-complete callback. */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart3;
static uint8_t rx;

void HAL_UART_RxCpltCallback(UART_HandleTypeDef *huart)
{
    if (HAL_UART_Transmit(huart, &rx, 1, 10) != HAL_OK) { /* expect: E_ISR_BLOCKING */
        return;
    }
}

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    huart3.Instance = USART3;
    if (HAL_UART_Init(&huart3) != HAL_OK || HAL_UART_Receive_IT(&huart3, &rx, 1) != HAL_OK) {
        return 1;
    }
    while (1) {
    }
}
