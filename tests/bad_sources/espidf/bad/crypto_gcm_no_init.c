/* BAD (check 3): the GCM context is keyed before mbedtls_gcm_init. */
#include <stdint.h>
#include "esp_log.h"
#include "esp_random.h"
#include "mbedtls/gcm.h"

static const char *TAG = "bad";

void app_main(void)
{
    mbedtls_gcm_context gcm;
    unsigned char key[32];

    esp_fill_random(key, sizeof(key));
    if (mbedtls_gcm_setkey(&gcm, MBEDTLS_CIPHER_ID_AES, key, 256U) != 0) { /* expect: E_CALL_ORDER */
        ESP_LOGE(TAG, "setkey");
    }
    mbedtls_gcm_init(&gcm);
    mbedtls_gcm_free(&gcm);
}
