/* BAD (check 2): NVIC_EnableInterrupt is not a CMSIS function (NVIC_EnableIRQ is). */
#include "stm32f4xx.h"

int main(void)
{
    NVIC_EnableInterrupt(USART2_IRQn); /* expect: E_UNKNOWN_API */
    while (1) {
        __WFI();
    }
}
