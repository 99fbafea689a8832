/* HAL configuration for the test project: only the modules main.c uses. */
#ifndef STM32H7XX_HAL_CONF_H
#define STM32H7XX_HAL_CONF_H

#define HAL_MODULE_ENABLED
#define HAL_ADC_MODULE_ENABLED
#define HAL_CORTEX_MODULE_ENABLED
#define HAL_DMA_MODULE_ENABLED
#define HAL_GPIO_MODULE_ENABLED
#define HAL_IWDG_MODULE_ENABLED
#define HAL_PWR_MODULE_ENABLED
#define HAL_RCC_MODULE_ENABLED
#define HAL_UART_MODULE_ENABLED
/* #define HAL_SPI_MODULE_ENABLED */

#define HSE_VALUE 8000000UL
#define HSE_STARTUP_TIMEOUT 100UL
#define TICK_INT_PRIORITY 0x0FUL
#define USE_HAL_UART_REGISTER_CALLBACKS 0U

#include "stm32h7xx_hal_rcc.h"
#include "stm32h7xx_hal_gpio.h"
#include "stm32h7xx_hal_dma.h"
#include "stm32h7xx_hal_cortex.h"
#include "stm32h7xx_hal_adc.h"
#include "stm32h7xx_hal_iwdg.h"
#include "stm32h7xx_hal_pwr.h"
#include "stm32h7xx_hal_uart.h"

#define assert_param(expr) ((void)0U)

#endif
