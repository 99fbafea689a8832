/* BAD (release): the socket is not closed when setting its timeout fails. */
#include <string.h>
#include <unistd.h>
#include "lwip/sockets.h"

static int exchange(void)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    const struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    int sock = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (sock < 0) {
        return -1;
    }
    if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
        return -1; /* expect: E_HANDLE_LEAK */
    }
    if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(sock);
        return -1;
    }
    close(sock);
    return 0;
}

void app_main(void)
{
    (void)exchange();
}
