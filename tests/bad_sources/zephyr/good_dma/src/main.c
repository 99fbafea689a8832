/* Good Zephyr 4.x app for a Cortex-M7 with D-cache: memory-to-memory DMA with cache maintenance,
 * completion callback giving a semaphore, result verified by the thread. */
#include <string.h>
#include <zephyr/kernel.h>
#include <zephyr/device.h>
#include <zephyr/drivers/dma.h>
#include <zephyr/cache.h>
#include <zephyr/sys/printk.h>

#define BUF_SIZE 64
#define DMA_CHANNEL 0

static uint8_t src_buf[BUF_SIZE] __aligned(32);
static uint8_t dst_buf[BUF_SIZE] __aligned(32);
static volatile int dma_status;

K_SEM_DEFINE(dma_done, 0, 1);

static void dma_complete(const struct device *dev, void *user_data, uint32_t channel, int status)
{
	ARG_UNUSED(dev);
	ARG_UNUSED(user_data);
	ARG_UNUSED(channel);
	dma_status = status;
	k_sem_give(&dma_done);
}

int main(void)
{
	const struct device *dma = DEVICE_DT_GET(DT_NODELABEL(dma1));
	struct dma_block_config block = {
		.source_address = (uint32_t)src_buf,
		.dest_address = (uint32_t)dst_buf,
		.block_size = BUF_SIZE,
	};
	struct dma_config cfg = {
		.channel_direction = MEMORY_TO_MEMORY,
		.source_data_size = 1,
		.dest_data_size = 1,
		.source_burst_length = 1,
		.dest_burst_length = 1,
		.block_count = 1,
		.head_block = &block,
		.dma_callback = dma_complete,
	};
	int ret;

	if (!device_is_ready(dma)) {
		printk("dma not ready\n");
		return 0;
	}
	for (int i = 0; i < BUF_SIZE; i++) {
		src_buf[i] = (uint8_t)i;
	}
	ret = dma_config(dma, DMA_CHANNEL, &cfg);
	if (ret < 0) {
		return 0;
	}
	ret = sys_cache_data_flush_range(src_buf, sizeof(src_buf));
	if (ret < 0 && ret != -ENOTSUP) {
		return 0;
	}
	ret = dma_start(dma, DMA_CHANNEL);
	if (ret < 0) {
		return 0;
	}
	if (k_sem_take(&dma_done, K_MSEC(100)) != 0 || dma_status < 0) {
		printk("dma timeout or error\n");
		return 0;
	}
	ret = sys_cache_data_invd_range(dst_buf, sizeof(dst_buf));
	if (ret < 0 && ret != -ENOTSUP) {
		return 0;
	}
	printk("dma copy %s\n", memcmp(src_buf, dst_buf, BUF_SIZE) == 0 ? "ok" : "MISMATCH");
	return 0;
}
