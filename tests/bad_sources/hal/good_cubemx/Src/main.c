/* CubeMX-style STM32H7 HAL app. Each construct below once raised a false alarm:
 * - the LED output level is written before HAL_GPIO_Init switches the pin to output (no glitch);
 * - the UART is initialized and used through helpers that take the handle as a parameter;
 * - the DMA buffer carries a trailing GNU attribute with section and alignment arguments. */
#include <string.h>
#include "main.h"

UART_HandleTypeDef huart3;

static uint8_t tx_buf[64] __attribute__((section(".dma.AXI_SRAM.tx_buf"), aligned(32)));
__attribute__((aligned(32))) static uint8_t scratch[32];
static uint8_t __attribute__((aligned(32), used)) banner[32];

void Error_Handler(void)
{
    __disable_irq();
    while (1) {
    }
}

static void MX_GPIO_Init(void)
{
    GPIO_InitTypeDef gpio = {0};

    __HAL_RCC_GPIOB_CLK_ENABLE();
    /* Configure GPIO pin Output Level */
    HAL_GPIO_WritePin(LED_GPIO_Port, LED_Pin, GPIO_PIN_RESET);
    gpio.Pin = LED_Pin;
    gpio.Mode = GPIO_MODE_OUTPUT_PP;
    gpio.Pull = GPIO_NOPULL;
    gpio.Speed = GPIO_SPEED_FREQ_LOW;
    HAL_GPIO_Init(LED_GPIO_Port, &gpio);
}

static void uart_init(UART_HandleTypeDef *huart, USART_TypeDef *instance)
{
    huart->Instance = instance;
    huart->Init.BaudRate = 115200;
    huart->Init.WordLength = UART_WORDLENGTH_8B;
    huart->Init.StopBits = UART_STOPBITS_1;
    huart->Init.Parity = UART_PARITY_NONE;
    huart->Init.Mode = UART_MODE_TX_RX;
    if (HAL_UART_Init(huart) != HAL_OK) {
        Error_Handler();
    }
}

static HAL_StatusTypeDef send(UART_HandleTypeDef *huart, const uint8_t *data, uint16_t len)
{
    return HAL_UART_Transmit(huart, data, len, 100);
}

int main(void)
{
    UART_HandleTypeDef *console = &huart3;

    if (HAL_Init() != HAL_OK) {
        Error_Handler();
    }
    MX_GPIO_Init();
    uart_init(&huart3, USART3);
    memcpy(banner, "hello\r\n", 7);
    memcpy(tx_buf, banner, sizeof(banner));
    memset(scratch, 0, sizeof(scratch));
    if (send(&huart3, tx_buf, 7) != HAL_OK) {
        Error_Handler();
    }
    while (1) {
        HAL_GPIO_TogglePin(LED_GPIO_Port, LED_Pin);
        if (HAL_UART_Transmit(console, (const uint8_t *)".", 1, 100) != HAL_OK) {
            Error_Handler();
        }
        HAL_Delay(500);
    }
}
