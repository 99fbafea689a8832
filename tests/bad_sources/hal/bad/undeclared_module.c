/* BAD (header model): the UART driver is used, but no HAL header is included (stm32h7xx_hal.h brings
 * each enabled module's header through the configuration header; stdint.h declares none of them). */
#include <stdint.h>

UART_HandleTypeDef huart3; /* expect: E_UNDECLARED */

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
    if (HAL_UART_Transmit(&huart3, msg, sizeof(msg) - 1, 100) != HAL_OK) {
        return 1;
    }
    return 0;
}
