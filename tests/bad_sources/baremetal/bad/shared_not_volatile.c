/* BAD (check 5): the SysTick counter the delay loop polls is not volatile. */
#include <stdint.h>
#include "stm32f4xx.h"

static uint32_t ticks;

void SysTick_Handler(void)
{
    ticks++; /* expect: E_ISR_SHARED_NOT_VOLATILE */
}

int main(void)
{
    if (SysTick_Config(SystemCoreClock / 1000U) != 0U) {
        return 1;
    }
    while (ticks < 1000U) {
    }
    return 0;
}
