/* BAD (check 7): the C reads io-channels[1] but the overlay's zephyr,user lists one channel. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/adc.h>

#define USER_NODE DT_PATH(zephyr_user)

static const struct adc_dt_spec chan = ADC_DT_SPEC_GET_BY_IDX(USER_NODE, 1); /* expect: E_DT_PROPERTY_MISSING */

int main(void)
{
	if (!adc_is_ready_dt(&chan) || adc_channel_setup_dt(&chan) < 0) {
		return 0;
	}
	return 0;
}
