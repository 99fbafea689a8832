/* BAD (order): a static address is set while the DHCP client still runs (esp_netif_set_ip_info fails). */
#include <string.h>
#include "esp_err.h"
#include "esp_event.h"
#include "esp_netif.h"
#include "esp_wifi.h"

void app_main(void)
{
    ESP_ERROR_CHECK(esp_netif_init());
    ESP_ERROR_CHECK(esp_event_loop_create_default());
    esp_netif_t *sta = esp_netif_create_default_wifi_sta();
    if (sta == NULL) {
        return;
    }
    esp_netif_ip_info_t ip;
    memset(&ip, 0, sizeof(ip));
    ip.ip.addr = ESP_IP4TOADDR(192, 0, 2, 20);
    ESP_ERROR_CHECK(esp_netif_set_ip_info(sta, &ip)); /* expect: E_CALL_ORDER */
    ESP_ERROR_CHECK(esp_netif_dhcpc_stop(sta));
}
