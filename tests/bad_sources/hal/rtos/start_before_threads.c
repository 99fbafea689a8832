/* BAD (call_order): osKernelStart runs before the thread exists (it does not return: the thread is never created). */
#include "stm32h7xx_hal.h"
#include "cmsis_os2.h"

static osSemaphoreId_t ready;
static volatile uint32_t taken;
static const osThreadAttr_t worker_attr = {.name = "worker", .stack_size = 1024U, .priority = osPriorityNormal};

static void worker(void *argument)
{
    (void)argument;
    for (;;) {
        if (osSemaphoreAcquire(ready, 250U) == osOK) {
            taken++;
        }
    }
}

void HAL_GPIO_EXTI_Callback(uint16_t GPIO_Pin)
{
    (void)GPIO_Pin;
    if (osSemaphoreRelease(ready) != osOK) {
        taken = 0U;
    }
}

void EXTI15_10_IRQHandler(void)
{
    HAL_GPIO_EXTI_IRQHandler(GPIO_PIN_13);
}

int main(void)
{
    if (HAL_Init() != HAL_OK) {
        return 1;
    }
    if (osKernelInitialize() != osOK) {
        return 1;
    }
    ready = osSemaphoreNew(1U, 0U, NULL);
    if (ready == NULL) {
        return 1;
    }
    if (osKernelStart() != osOK) { /* expect: E_CALL_ORDER */
        return 1;
    }
    if (osThreadNew(worker, NULL, &worker_attr) == NULL) {
        return 1;
    }
    return 0;
}
