/* Good Zephyr 4.x app: ADC through the devicetree spec, LED blink, button ISR handing work to a thread,
 * periodic timer submitting work, watchdog fed from the main loop. No check must fire on it. */
#include <zephyr/kernel.h>
#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/adc.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/watchdog.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/atomic.h>

LOG_MODULE_REGISTER(app, LOG_LEVEL_INF);

#define ZEPHYR_USER_NODE DT_PATH(zephyr_user)
#define WDT_NODE DT_ALIAS(watchdog0)

static const struct adc_dt_spec adc_channel = ADC_DT_SPEC_GET_BY_IDX(ZEPHYR_USER_NODE, 0);
static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);
static const struct gpio_dt_spec button = GPIO_DT_SPEC_GET(DT_ALIAS(sw0), gpios);
static const struct device *const wdt = DEVICE_DT_GET(WDT_NODE);

static struct gpio_callback button_cb_data;
static volatile uint32_t press_count;
static atomic_t timer_ticks = ATOMIC_INIT(0);

K_SEM_DEFINE(button_sem, 0, 1);
K_MSGQ_DEFINE(sample_q, sizeof(int32_t), 8, 4);

static void sample_work_handler(struct k_work *work)
{
	ARG_UNUSED(work);
	LOG_INF("timer ticks %ld", (long)atomic_get(&timer_ticks));
}

K_WORK_DEFINE(sample_work, sample_work_handler);

static void tick_expiry(struct k_timer *timer)
{
	ARG_UNUSED(timer);
	atomic_inc(&timer_ticks);
	k_work_submit(&sample_work);
}

K_TIMER_DEFINE(tick_timer, tick_expiry, NULL);

static void button_pressed(const struct device *dev, struct gpio_callback *cb, uint32_t pins)
{
	ARG_UNUSED(dev);
	ARG_UNUSED(cb);
	ARG_UNUSED(pins);
	press_count++;
	k_sem_give(&button_sem);
}

static void button_thread(void *p1, void *p2, void *p3)
{
	ARG_UNUSED(p1);
	ARG_UNUSED(p2);
	ARG_UNUSED(p3);
	while (1) {
		if (k_sem_take(&button_sem, K_FOREVER) == 0) {
			LOG_INF("button pressed %u times", press_count);
		}
	}
}

K_THREAD_DEFINE(button_tid, 1024, button_thread, NULL, NULL, NULL, 7, 0, 0);

static int setup_button(void)
{
	int ret;

	if (!gpio_is_ready_dt(&button)) {
		return -ENODEV;
	}
	ret = gpio_pin_configure_dt(&button, GPIO_INPUT);
	if (ret < 0) {
		return ret;
	}
	ret = gpio_pin_interrupt_configure_dt(&button, GPIO_INT_EDGE_TO_ACTIVE);
	if (ret < 0) {
		return ret;
	}
	gpio_init_callback(&button_cb_data, button_pressed, BIT(button.pin));
	return gpio_add_callback_dt(&button, &button_cb_data);
}

static int setup_watchdog(int *channel)
{
	const struct wdt_timeout_cfg cfg = {
		.window = {.min = 0, .max = 2000},
		.callback = NULL,
		.flags = WDT_FLAG_RESET_SOC,
	};

	if (!device_is_ready(wdt)) {
		return -ENODEV;
	}
	*channel = wdt_install_timeout(wdt, &cfg);
	if (*channel < 0) {
		return *channel;
	}
	return wdt_setup(wdt, WDT_OPT_PAUSE_HALTED_BY_DBG);
}

int main(void)
{
	int err;
	int wdt_channel = 0;
	uint16_t buf;
	struct adc_sequence sequence = {
		.buffer = &buf,
		.buffer_size = sizeof(buf),
	};

	if (!adc_is_ready_dt(&adc_channel) || !gpio_is_ready_dt(&led)) {
		LOG_ERR("devices not ready");
		return 0;
	}
	err = adc_channel_setup_dt(&adc_channel);
	if (err < 0) {
		LOG_ERR("adc setup failed (%d)", err);
		return 0;
	}
	err = adc_sequence_init_dt(&adc_channel, &sequence);
	if (err < 0) {
		return 0;
	}
	err = gpio_pin_configure_dt(&led, GPIO_OUTPUT_ACTIVE);
	if (err < 0) {
		return 0;
	}
	if (setup_button() < 0 || setup_watchdog(&wdt_channel) < 0) {
		return 0;
	}
	k_timer_start(&tick_timer, K_MSEC(500), K_MSEC(500));

	while (1) {
		int32_t val_mv;

		err = adc_read_dt(&adc_channel, &sequence);
		if (err < 0) {
			LOG_ERR("adc read failed (%d)", err);
			continue;
		}
		val_mv = (int32_t)buf;
		err = adc_raw_to_millivolts_dt(&adc_channel, &val_mv);
		if (err == 0 && k_msgq_put(&sample_q, &val_mv, K_NO_WAIT) != 0) {
			LOG_WRN("sample queue full");
		}
		LOG_INF("%s: %d mV", adc_channel.dev->name, val_mv);
		err = gpio_pin_toggle_dt(&led);
		if (err < 0) {
			return 0;
		}
		err = wdt_feed(wdt, wdt_channel);
		if (err < 0) {
			return 0;
		}
		k_msleep(1000);
	}
	return 0;
}
