/* BAD (check 1): a syntax error inside a struct body (tree-sitter nests the ERROR in the field list). */
#include <zephyr/kernel.h>

struct sample {
	uint32_t timestamp;
	int32_t value millivolts; /* expect: E_C_PARSE */
};

static struct sample last;

int main(void)
{
	last.timestamp = k_uptime_get_32();
	return 0;
}
