/* BAD (unused statics): a drop counter is defined but nothing counts into it or reads it (GCC:
 * 'press_dropped' defined but not used, an error under -Werror). */
#include <zephyr/kernel.h>
#include <zephyr/sys/atomic.h>

static atomic_t press_handled = ATOMIC_INIT(0);
static atomic_t press_dropped = ATOMIC_INIT(0); /* expect: E_UNUSED_STATIC */
static __maybe_unused atomic_t press_spare = ATOMIC_INIT(0);

/* An unused static inline helper is no warning (-Wunused-function exempts inline functions): not flagged. */
static inline int press_scale(int value)
{
	return value * 2;
}

int main(void)
{
	while (1) {
		atomic_inc(&press_handled);
		k_msleep(500);
	}
	return 0;
}
