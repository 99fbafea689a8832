/* BAD (check 4): a local macro hides HAL_Delay inside the EXTI callback (interrupt context). */
#include "stm32h7xx_hal.h"

#define DEBOUNCE(ms) HAL_Delay(ms)

static volatile uint32_t presses;

void HAL_GPIO_EXTI_Callback(uint16_t GPIO_Pin)
{
    DEBOUNCE(20); /* expect: E_ISR_BLOCKING */
    presses++;
}

void EXTI15_10_IRQHandler(void)
{
    HAL_GPIO_EXTI_IRQHandler(GPIO_PIN_13);
}

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    while (presses < 3) {
    }
    return 0;
}
