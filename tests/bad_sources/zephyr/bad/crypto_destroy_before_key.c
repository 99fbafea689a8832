/* BAD (check 3): the key is destroyed before it is created. */
#include <zephyr/kernel.h>
#include <psa/crypto.h>

static mbedtls_svc_key_id_t key;

int main(void)
{
	psa_key_attributes_t attributes = psa_key_attributes_init();

	if (psa_crypto_init() != PSA_SUCCESS) {
		return -1;
	}
	psa_set_key_type(&attributes, PSA_KEY_TYPE_AES);
	psa_set_key_bits(&attributes, 128U);
	if (psa_destroy_key(key) != PSA_SUCCESS) { /* expect: E_CALL_ORDER */
		return -1;
	}
	if (psa_generate_key(&attributes, &key) != PSA_SUCCESS) {
		return -1;
	}
	return 0;
}
