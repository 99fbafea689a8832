/* Good STM32H7 HAL app: UART3 console, ADC1 sampled by DMA into a cache-line aligned buffer with
 * D-cache maintenance, LED toggled from the main loop, IWDG refreshed. No check must fire on it. */
#include <stdio.h>
#include <string.h>
#include "stm32h7xx_hal.h"

#define ADC_SAMPLES 32

UART_HandleTypeDef huart3;
ADC_HandleTypeDef hadc1;
DMA_HandleTypeDef hdma_adc1;
IWDG_HandleTypeDef hiwdg1;

ALIGN_32BYTES(static uint16_t adc_buf[ADC_SAMPLES]);
static volatile uint8_t adc_ready;

static void Error_Handler(void)
{
    __disable_irq();
    while (1) {
    }
}

static void SystemClock_Config(void)
{
    RCC_OscInitTypeDef osc = {0};
    RCC_ClkInitTypeDef clk = {0};

    if (HAL_PWREx_ConfigSupply(PWR_LDO_SUPPLY) != HAL_OK) {
        Error_Handler();
    }
    osc.OscillatorType = RCC_OSCILLATORTYPE_HSI;
    osc.HSIState = RCC_HSI_DIV1;
    osc.PLL.PLLState = RCC_PLL_NONE;
    if (HAL_RCC_OscConfig(&osc) != HAL_OK) {
        Error_Handler();
    }
    clk.ClockType = RCC_CLOCKTYPE_HCLK | RCC_CLOCKTYPE_SYSCLK;
    clk.SYSCLKSource = RCC_SYSCLKSOURCE_HSI;
    if (HAL_RCC_ClockConfig(&clk, FLASH_LATENCY_1) != HAL_OK) {
        Error_Handler();
    }
}

static void MX_GPIO_Init(void)
{
    GPIO_InitTypeDef gpio = {0};

    __HAL_RCC_GPIOB_CLK_ENABLE();
    gpio.Pin = GPIO_PIN_0;
    gpio.Mode = GPIO_MODE_OUTPUT_PP;
    gpio.Pull = GPIO_NOPULL;
    gpio.Speed = GPIO_SPEED_FREQ_LOW;
    HAL_GPIO_Init(GPIOB, &gpio);
    HAL_GPIO_WritePin(GPIOB, GPIO_PIN_0, GPIO_PIN_RESET);
}

static void MX_USART3_UART_Init(void)
{
    huart3.Instance = USART3;
    huart3.Init.BaudRate = 115200;
    huart3.Init.WordLength = UART_WORDLENGTH_8B;
    huart3.Init.StopBits = UART_STOPBITS_1;
    huart3.Init.Parity = UART_PARITY_NONE;
    huart3.Init.Mode = UART_MODE_TX_RX;
    if (HAL_UART_Init(&huart3) != HAL_OK) {
        Error_Handler();
    }
}

static void MX_ADC1_Init(void)
{
    ADC_ChannelConfTypeDef channel = {0};

    hadc1.Instance = ADC1;
    hadc1.Init.Resolution = ADC_RESOLUTION_16B;
    hadc1.Init.ContinuousConvMode = ENABLE;
    hadc1.Init.NbrOfConversion = 1;
    hadc1.Init.ConversionDataManagement = ADC_CONVERSIONDATA_DMA_ONESHOT;
    if (HAL_ADC_Init(&hadc1) != HAL_OK) {
        Error_Handler();
    }
    channel.Channel = ADC_CHANNEL_15;
    channel.Rank = ADC_REGULAR_RANK_1;
    channel.SamplingTime = ADC_SAMPLETIME_64CYCLES_5;
    if (HAL_ADC_ConfigChannel(&hadc1, &channel) != HAL_OK) {
        Error_Handler();
    }
}

static void MX_IWDG1_Init(void)
{
    hiwdg1.Instance = IWDG1;
    hiwdg1.Init.Prescaler = IWDG_PRESCALER_64;
    hiwdg1.Init.Window = 4095;
    hiwdg1.Init.Reload = 4095;
    if (HAL_IWDG_Init(&hiwdg1) != HAL_OK) {
        Error_Handler();
    }
}

void HAL_ADC_ConvCpltCallback(ADC_HandleTypeDef *hadc)
{
    if (hadc->Instance == ADC1) {
        SCB_InvalidateDCache_by_Addr((uint32_t *)adc_buf, sizeof(adc_buf));
        adc_ready = 1;
    }
}

int main(void)
{
    char line[48];

    SCB_EnableICache();
    SCB_EnableDCache();
    if (HAL_Init() != HAL_OK) {
        Error_Handler();
    }
    SystemClock_Config();
    MX_GPIO_Init();
    MX_USART3_UART_Init();
    MX_ADC1_Init();
    MX_IWDG1_Init();
    SCB_CleanDCache_by_Addr((uint32_t *)adc_buf, sizeof(adc_buf));
    if (HAL_ADC_Start_DMA(&hadc1, (uint32_t *)adc_buf, ADC_SAMPLES) != HAL_OK) {
        Error_Handler();
    }
    while (1) {
        if (adc_ready) {
            adc_ready = 0;
            int len = snprintf(line, sizeof(line), "adc %u\r\n", (unsigned)adc_buf[0]);
            if (HAL_UART_Transmit(&huart3, (const uint8_t *)line, (uint16_t)len, 100) != HAL_OK) {
                Error_Handler();
            }
        }
        HAL_GPIO_TogglePin(GPIOB, GPIO_PIN_0);
        if (HAL_IWDG_Refresh(&hiwdg1) != HAL_OK) {
            Error_Handler();
        }
        HAL_Delay(500);
    }
}
