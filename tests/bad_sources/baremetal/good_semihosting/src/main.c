/* Good bare-metal STM32F407 app ending through ARM semihosting (SYS_EXIT_EXTENDED), as QEMU runs need.
 * Once false alarms: asm register variables with an initializer, GNU attributes after the declarator
 * (section/aligned/alias arguments are not calls), a function-like attribute macro, the split extern "C"
 * guard of app.h, CMSIS's __ASM keyword. */
#include <stdint.h>
#include "stm32f4xx.h"
#include "app.h"

static uint8_t rx_buf[256] __attribute__((section(".dma.SRAM1.rx_buf"), aligned(32)));
static uint8_t tx_buf[64] APP_DMA("tx_buf");
static volatile uint32_t ms_ticks __attribute__((used));

void Default_Handler(void)
{
    while (1) {
    }
}

void WWDG_IRQHandler(void) __attribute__((weak, alias("Default_Handler")));

void SysTick_Handler(void)
{
    ms_ticks++;
}

void app_fill(uint8_t *buf, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)i;
    }
}

void app_exit(int status)
{
    /* ADP_Stopped_ApplicationExit with the status: SYS_EXIT_EXTENDED (0x20) takes a two-word block. */
    uint32_t block[2] = {0x20026U, (uint32_t)status};
    register uint32_t r0 __asm__("r0") = 0x20;
    register uint32_t r1 __asm__("r1") = (uint32_t)block;

    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    __ASM volatile("dsb 0xF" ::: "memory");
    while (1) {
    }
}

int main(void)
{
    SystemCoreClockUpdate();
    if (SysTick_Config(SystemCoreClock / 1000U) != 0U) {
        app_exit(1);
    }
    app_fill(tx_buf, sizeof(tx_buf));
    app_fill(rx_buf, sizeof(rx_buf));
    while (ms_ticks < 10U) {
        __WFI();
    }
    app_exit(rx_buf[1] == tx_buf[1] ? 0 : 2);
}
