/* BAD (release): the HTTP client is not cleaned up when its body cannot be set. */
#include <string.h>
#include "esp_err.h"
#include "esp_http_client.h"

static int post(void)
{
    esp_http_client_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.url = "http://192.0.2.1/report";
    cfg.method = HTTP_METHOD_POST;
    esp_http_client_handle_t client = esp_http_client_init(&cfg);
    if (client == NULL) {
        return -1;
    }
    if (esp_http_client_set_post_field(client, "up", 2) != ESP_OK) {
        return -1; /* expect: E_HANDLE_LEAK */
    }
    esp_err_t err = esp_http_client_perform(client);
    esp_http_client_cleanup(client);
    return err == ESP_OK ? 0 : -1;
}

void app_main(void)
{
    (void)post();
}
