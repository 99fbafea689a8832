/* BAD (periph order rule): a conversion is started before the offset calibration, which needs the ADC disabled. */
#include "stm32h7xx_hal.h"

static ADC_HandleTypeDef hadc1;

int main(void)
{
    ADC_ChannelConfTypeDef config = {0};

    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    __HAL_RCC_ADC12_CLK_ENABLE();
    hadc1.Instance = ADC1;
    if (HAL_ADC_Init(&hadc1) != HAL_OK) {
        return 1;
    }
    config.Channel = ADC_CHANNEL_5;
    config.Rank = ADC_REGULAR_RANK_1;
    config.SingleDiff = ADC_DIFFERENTIAL_ENDED;
    if (HAL_ADC_ConfigChannel(&hadc1, &config) != HAL_OK) {
        return 1;
    }
    if (HAL_ADC_Start(&hadc1) != HAL_OK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    if (HAL_ADCEx_Calibration_Start(&hadc1, ADC_CALIB_OFFSET, ADC_DIFFERENTIAL_ENDED) != HAL_OK) {
        return 1;
    }
    return HAL_ADC_Stop(&hadc1) == HAL_OK ? 0 : 1;
}
