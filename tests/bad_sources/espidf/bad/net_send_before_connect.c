/* BAD (order): data is sent on a TCP socket before it is connected. */
#include <string.h>
#include <unistd.h>
#include "lwip/sockets.h"

void app_main(void)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    int sock = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (sock < 0) {
        return;
    }
    if (send(sock, "hi", 2, 0) < 0) { /* expect: E_CALL_ORDER */
        close(sock);
        return;
    }
    if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(sock);
        return;
    }
    close(sock);
}
