/* BAD (check 1): a statement is not terminated; tree-sitter reports a MISSING ';'. */
#include <zephyr/kernel.h>

int main(void)
{
	int count = 0;
	count = count + 1 /* expect: E_C_PARSE */
	k_msleep(10);
	return count;
}
