/* BAD (check 7): PWM is used but prj.conf (support/prj_no_pwm.conf) does not enable CONFIG_PWM. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/pwm.h>

static const struct pwm_dt_spec pwm_led = PWM_DT_SPEC_GET(DT_ALIAS(pwm_led0));

int main(void)
{
	if (!pwm_is_ready_dt(&pwm_led)) {
		return 0;
	}
	return pwm_set_pulse_dt(&pwm_led, PWM_USEC(500)); /* expect: E_KCONFIG_MISSING */
}
