/* BAD (check 3): the UART is used through a helper before the helper that initializes it runs. The
 * handle is a parameter of both helpers, so the order is judged at their call sites in main(). */
#include "stm32h7xx_hal.h"

UART_HandleTypeDef huart3;

static HAL_StatusTypeDef uart_init(UART_HandleTypeDef *huart)
{
    huart->Instance = USART3;
    huart->Init.BaudRate = 115200;
    return HAL_UART_Init(huart);
}

static HAL_StatusTypeDef send(UART_HandleTypeDef *huart, const uint8_t *data, uint16_t len)
{
    return HAL_UART_Transmit(huart, data, len, 100);
}

int main(void)
{
    static const uint8_t msg[] = "hi\r\n";

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    if (send(&huart3, msg, sizeof(msg) - 1) != HAL_OK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    if (uart_init(&huart3) != HAL_OK) {
        return 1;
    }
    return 0;
}
