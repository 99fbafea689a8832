/* BAD (check 3): key material drawn from the C library's rand(), which is not a CSPRNG. */
#include <stdlib.h>
#include <zephyr/kernel.h>
#include <psa/crypto.h>

int main(void)
{
	uint8_t key[16];

	if (psa_crypto_init() != PSA_SUCCESS) {
		return -1;
	}
	for (size_t i = 0; i < sizeof(key); i++) {
		key[i] = (uint8_t)rand(); /* expect: E_FORBIDDEN_CALL */
	}
	return key[0];
}
