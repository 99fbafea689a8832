/* BAD (check 3): the ADC is read before its channel is set up. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/adc.h>

static const struct adc_dt_spec chan = ADC_DT_SPEC_GET(DT_PATH(zephyr_user));

int main(void)
{
	uint16_t raw;
	struct adc_sequence seq = {.buffer = &raw, .buffer_size = sizeof(raw)};

	if (!adc_is_ready_dt(&chan)) {
		return 0;
	}
	if (adc_read_dt(&chan, &seq) < 0) { /* expect: E_CALL_ORDER */
		return 0;
	}
	if (adc_channel_setup_dt(&chan) < 0) {
		return 0;
	}
	return raw;
}
