/* BAD (check 6): SysTick_Config reports an impossible reload value with a non-zero result; it is ignored. */
#include "stm32f4xx.h"

int main(void)
{
    SysTick_Config(SystemCoreClock / 1000U); /* expect: E_UNCHECKED_RETURN */
    while (1) {
        __WFI();
    }
}
