/* BAD (secret): the CA certificate is written in the source instead of coming from configuration. */
#include "esp_err.h"
#include "esp_tls.h"

void app_main(void)
{
    ESP_ERROR_CHECK(esp_tls_set_global_ca_store((const unsigned char *)"-----BEGIN CERTIFICATE-----\n", 29)); /* expect: E_SECRET_LITERAL */
}
