/* BAD (power order rule): the RTC wake-up timer is armed through a handle HAL_RTC_Init has not initialized yet. */
#include "stm32h7xx_hal.h"

static RTC_HandleTypeDef hrtc;

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    __HAL_RCC_RTC_ENABLE();
    __HAL_RCC_RTC_CLK_ENABLE();
    hrtc.Instance = RTC;
    hrtc.Init.HourFormat = RTC_HOURFORMAT_24;
    hrtc.Init.AsynchPrediv = 127U;
    hrtc.Init.SynchPrediv = 249U;
    if (HAL_RTCEx_SetWakeUpTimer_IT(&hrtc, 15999U, RTC_WAKEUPCLOCK_RTCCLK_DIV2) != HAL_OK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    return HAL_RTC_Init(&hrtc) == HAL_OK ? 0 : 1;
}
