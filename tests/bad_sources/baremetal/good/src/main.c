/* Good bare-metal STM32F407 app: SysTick millisecond tick shared with the main loop (volatile),
 * LED on PD12 toggled by register writes, USART2 interrupt counting received bytes. */
#include <stdint.h>
#include "stm32f4xx.h"

static volatile uint32_t ms_ticks;
static volatile uint32_t rx_count;

void SysTick_Handler(void)
{
    ms_ticks++;
}

void USART2_IRQHandler(void)
{
    if (USART2->SR & USART_SR_RXNE) {
        (void)USART2->DR;
        rx_count++;
    }
}

static void delay_ms(uint32_t ms)
{
    uint32_t start = ms_ticks;
    while ((ms_ticks - start) < ms) {
        __WFI();
    }
}

int main(void)
{
    SystemCoreClockUpdate();
    if (SysTick_Config(SystemCoreClock / 1000U) != 0U) {
        while (1) {
        }
    }
    RCC->AHB1ENR |= RCC_AHB1ENR_GPIODEN;
    RCC->APB1ENR |= RCC_APB1ENR_USART2EN;
    __DSB();
    GPIOD->MODER = (GPIOD->MODER & ~(3U << (12U * 2U))) | (1U << (12U * 2U));
    USART2->CR1 |= USART_CR1_RXNEIE | USART_CR1_RE | USART_CR1_UE;
    NVIC_SetPriority(USART2_IRQn, 5);
    NVIC_EnableIRQ(USART2_IRQn);
    while (1) {
        GPIOD->ODR ^= (1U << 12U);
        delay_ms(500U + (rx_count & 1U));
    }
}
