/* BAD (check 4): printf inside a USART interrupt handler. */
#include <stdio.h>
#include "stm32f4xx.h"

void USART2_IRQHandler(void)
{
    if (USART2->SR & USART_SR_RXNE) {
        printf("rx %c\n", (char)USART2->DR); /* expect: E_ISR_LOGGING */
    }
}

int main(void)
{
    NVIC_EnableIRQ(USART2_IRQn);
    while (1) {
        __WFI();
    }
}
