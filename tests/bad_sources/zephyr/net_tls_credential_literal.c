/* BAD (secret): the CA certificate is written in the source instead of coming from configuration. */
#include <zephyr/kernel.h>
#include <zephyr/net/tls_credentials.h>

static const char ca[64] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

int main(void)
{
	return tls_credential_add(1, TLS_CREDENTIAL_CA_CERTIFICATE, ca, sizeof(ca)); /* expect: E_SECRET_LITERAL */
}
