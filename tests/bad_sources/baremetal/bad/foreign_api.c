/* BAD (check 2): a HAL call in a bare-metal (register-level) program. */
#include "stm32f4xx.h"

int main(void)
{
    RCC->AHB1ENR |= RCC_AHB1ENR_GPIODEN;
    while (1) {
        GPIOD->ODR ^= (1U << 12U);
        HAL_Delay(500); /* expect: E_FOREIGN_API */
    }
}
