/* BAD (check 3): the GCM key is a string literal in the source. */
#include <stdint.h>
#include "esp_log.h"
#include "mbedtls/gcm.h"

static const char *TAG = "bad";

void app_main(void)
{
    mbedtls_gcm_context gcm;

    mbedtls_gcm_init(&gcm);
    if (mbedtls_gcm_setkey(&gcm, MBEDTLS_CIPHER_ID_AES, (const unsigned char *)"0123456789abcdef", 128U) != 0) { /* expect: E_SECRET_LITERAL */
        ESP_LOGE(TAG, "setkey");
    }
    mbedtls_gcm_free(&gcm);
}
