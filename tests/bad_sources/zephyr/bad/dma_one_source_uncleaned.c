/* BAD (check 3, cached core): two copies on two channels; only the first source is cleaned. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/dma.h>
#include <zephyr/cache.h>

static uint8_t src_a[32] __aligned(32);
static uint8_t src_b[32] __aligned(32);
static uint8_t dst[64] __aligned(32);

int main(void)
{
	const struct device *dma = DEVICE_DT_GET(DT_NODELABEL(dma1));
	struct dma_block_config a = {.source_address = (uint32_t)src_a, .dest_address = (uint32_t)dst, .block_size = 32};
	struct dma_block_config b = {.source_address = (uint32_t)src_b, .dest_address = (uint32_t)&dst[32], .block_size = 32};
	struct dma_config cfg_a = {.channel_direction = MEMORY_TO_MEMORY, .block_count = 1, .head_block = &a};
	struct dma_config cfg_b = {.channel_direction = MEMORY_TO_MEMORY, .block_count = 1, .head_block = &b};

	if (!device_is_ready(dma) || dma_config(dma, 0, &cfg_a) < 0 || dma_config(dma, 1, &cfg_b) < 0) {
		return 0;
	}
	if (sys_cache_data_flush_range(src_a, sizeof(src_a)) < 0 || dma_start(dma, 0) < 0) {
		return 0;
	}
	if (dma_start(dma, 1) < 0) { /* expect: E_CACHE_FLUSH_MISSING */
		return 0;
	}
	k_msleep(10);
	if (sys_cache_data_invd_range(dst, sizeof(dst)) < 0) {
		return 0;
	}
	return dst[0];
}
