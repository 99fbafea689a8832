/* CubeMX-style application header: the C++ guard is split across two conditional groups, balanced only
 * after preprocessing (false alarm E_C_PARSE before the verifier resolved __cplusplus as undefined). */
#ifndef MAIN_H
#define MAIN_H

#ifdef __cplusplus
extern "C" {
#endif

#include "stm32h7xx_hal.h"

#define LED_GPIO_Port GPIOB
#define LED_Pin GPIO_PIN_0

void Error_Handler(void);

#ifdef __cplusplus
}
#endif

#endif /* MAIN_H */
