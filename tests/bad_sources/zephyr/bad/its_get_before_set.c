/* BAD (check 3): an ITS record is read back before it is ever written. */
#include <zephyr/kernel.h>
#include <psa/crypto.h>
#include <psa/internal_trusted_storage.h>

static uint8_t data[32];
static uint8_t back[32];

int main(void)
{
	const psa_storage_uid_t uid = 7U;
	size_t length = 0;

	if (psa_crypto_init() != PSA_SUCCESS) {
		return -1;
	}
	if (psa_its_get(uid, 0, sizeof(back), back, &length) != PSA_SUCCESS) { /* expect: E_CALL_ORDER */
		return -1;
	}
	if (psa_its_set(uid, sizeof(data), data, PSA_STORAGE_FLAG_NONE) != PSA_SUCCESS) {
		return -1;
	}
	return (int)length;
}
