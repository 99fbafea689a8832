/* BAD (check 3): an ITS record is sealed (AEAD, random nonce) but psa_crypto_init is never called. */
#include <zephyr/kernel.h>
#include <psa/internal_trusted_storage.h>

static uint8_t data[16];

int main(void)
{
	const psa_storage_uid_t uid = 3U;

	if (psa_its_set(uid, sizeof(data), data, PSA_STORAGE_FLAG_NONE) != PSA_SUCCESS) { /* expect: E_CALL_MISSING */
		return -1;
	}
	if (psa_its_remove(uid) != PSA_SUCCESS) {
		return -1;
	}
	return 0;
}
