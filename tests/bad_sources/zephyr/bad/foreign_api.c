/* BAD (check 2): an STM32 HAL call in a Zephyr application. */
#include <zephyr/kernel.h>

int main(void)
{
	while (1) {
		HAL_Delay(500); /* expect: E_FOREIGN_API */
	}
	return 0;
}
