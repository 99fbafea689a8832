/* BAD (returns): the request header's result is dropped, so a request without its Content-Type goes out. */
#include <string.h>
#include "esp_err.h"
#include "esp_http_client.h"

void app_main(void)
{
    esp_http_client_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.url = "http://192.0.2.1/report";
    esp_http_client_handle_t client = esp_http_client_init(&cfg);
    if (client == NULL) {
        return;
    }
    esp_http_client_set_header(client, "Content-Type", "text/plain"); /* expect: E_UNCHECKED_RETURN */
    if (esp_http_client_perform(client) != ESP_OK) {
        esp_http_client_cleanup(client);
        return;
    }
    esp_http_client_cleanup(client);
}
