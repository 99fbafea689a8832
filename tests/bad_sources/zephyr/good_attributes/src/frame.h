/* Wire format shared with a host tool written in C++ (split extern "C" guard). */
#ifndef FRAME_H
#define FRAME_H

#include <stdint.h>
#include <zephyr/toolchain.h>

#ifdef __cplusplus
extern "C" {
#endif

struct __packed frame_header {
	uint8_t kind;
	uint16_t length;
};

int frame_send(const struct device *uart, const uint8_t *data, uint16_t length);

#ifdef __cplusplus
}
#endif

#endif
