/* BAD (check 3): the AES key is written in the source, so it ships in every image. */
#include <zephyr/kernel.h>
#include <psa/crypto.h>

static const uint8_t key_bytes[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
				      0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};

int main(void)
{
	psa_key_attributes_t attributes = psa_key_attributes_init();
	mbedtls_svc_key_id_t key;

	if (psa_crypto_init() != PSA_SUCCESS) {
		return -1;
	}
	psa_set_key_type(&attributes, PSA_KEY_TYPE_AES);
	psa_set_key_bits(&attributes, 128U);
	psa_set_key_usage_flags(&attributes, PSA_KEY_USAGE_ENCRYPT);
	psa_set_key_algorithm(&attributes, PSA_ALG_GCM);
	if (psa_import_key(&attributes, key_bytes, sizeof(key_bytes), &key) != PSA_SUCCESS) { /* expect: E_SECRET_LITERAL */
		return -1;
	}
	return (psa_destroy_key(key) == PSA_SUCCESS) ? 0 : -1;
}
