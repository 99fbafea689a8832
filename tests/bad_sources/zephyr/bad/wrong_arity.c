/* BAD (check 2): adc_read_dt takes the spec and a sequence; the sequence is missing. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/adc.h>

static const struct adc_dt_spec chan = ADC_DT_SPEC_GET(DT_PATH(zephyr_user));

int main(void)
{
	if (!adc_is_ready_dt(&chan) || adc_channel_setup_dt(&chan) < 0) {
		return 0;
	}
	if (adc_read_dt(&chan) < 0) { /* expect: E_API_ARITY */
		return 0;
	}
	return 0;
}
