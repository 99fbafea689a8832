/* BAD (order): the request is performed on a client handle that esp_http_client_init never created. */
#include "esp_err.h"
#include "esp_http_client.h"

static esp_http_client_handle_t client;

void app_main(void)
{
    esp_err_t err = esp_http_client_perform(client); /* expect: E_CALL_MISSING */
    if (err != ESP_OK) {
        return;
    }
}
