/* Application interface shared by the C files; usable from C++ test harnesses too (split guard). */
#ifndef APP_H
#define APP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__cplusplus)
#define APP_NORETURN [[noreturn]]
#else
#define APP_NORETURN __attribute__((noreturn))
#endif

/* Placement of DMA buffers: a named linker section and the cache-line alignment. */
#define APP_DMA(name) __attribute__((section(".dma.SRAM1." name), aligned(32)))

APP_NORETURN void app_exit(int status);
void app_fill(uint8_t *buf, uint32_t len);

#ifdef __cplusplus
}
#endif

#endif
