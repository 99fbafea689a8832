/* BAD (check 3, cached core): after the copy the source is invalidated instead of the destination. */
#include <zephyr/kernel.h>
#include <zephyr/drivers/dma.h>
#include <zephyr/cache.h>

static uint8_t src[32] __aligned(32);
static uint8_t dst[32] __aligned(32);

int main(void)
{
	const struct device *dma = DEVICE_DT_GET(DT_NODELABEL(dma1));
	struct dma_block_config block = {.source_address = (uint32_t)src, .dest_address = (uint32_t)dst, .block_size = 32};
	struct dma_config cfg = {.channel_direction = MEMORY_TO_MEMORY, .block_count = 1, .head_block = &block};

	if (!device_is_ready(dma) || dma_config(dma, 0, &cfg) < 0) {
		return 0;
	}
	if (sys_cache_data_flush_range(src, sizeof(src)) < 0) {
		return 0;
	}
	if (dma_start(dma, 0) < 0) { /* expect: E_CACHE_INVALIDATE_MISSING */
		return 0;
	}
	k_msleep(10);
	if (sys_cache_data_invd_range(src, sizeof(src)) < 0) {
		return 0;
	}
	return dst[0];
}
