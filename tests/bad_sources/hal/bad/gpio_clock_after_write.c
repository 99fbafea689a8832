/* BAD (check 3): the LED level is written (allowed before HAL_GPIO_Init) but the GPIOB clock is enabled
 * only afterwards, so the write to the unclocked port is lost. */
#include "stm32h7xx_hal.h"

int main(void)
{
    GPIO_InitTypeDef gpio = {0};

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    HAL_GPIO_WritePin(GPIOB, GPIO_PIN_0, GPIO_PIN_RESET); /* expect: E_CLOCK_NOT_ENABLED */
    __HAL_RCC_GPIOB_CLK_ENABLE();
    gpio.Pin = GPIO_PIN_0;
    gpio.Mode = GPIO_MODE_OUTPUT_PP;
    HAL_GPIO_Init(GPIOB, &gpio);
    while (1) {
        HAL_GPIO_TogglePin(GPIOB, GPIO_PIN_0);
        HAL_Delay(500);
    }
}
