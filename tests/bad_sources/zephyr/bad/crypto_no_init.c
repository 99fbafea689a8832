/* BAD (check 3): a PSA hash is computed but psa_crypto_init is never called. */
#include <zephyr/kernel.h>
#include <psa/crypto.h>

static const uint8_t message[] = "frame";

int main(void)
{
	uint8_t digest[32];
	size_t length = 0;

	if (psa_hash_compute(PSA_ALG_SHA_256, message, sizeof(message) - 1U, digest, sizeof(digest), &length) != PSA_SUCCESS) { /* expect: E_CALL_MISSING */
		return -1;
	}
	return (int)length;
}
