/* BAD (release): the accepted client socket is not closed when its timeout cannot be set, and the loop goes on. */
#include <string.h>
#include <unistd.h>
#include "lwip/sockets.h"

void app_main(void)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    const struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    int listener = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (listener < 0) {
        return;
    }
    if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listener, 1) != 0) {
        close(listener);
        return;
    }
    for (int i = 0; i < 8; i++) {
        int client = accept(listener, NULL, NULL);
        if (client < 0) {
            continue;
        }
        if (setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
            continue; /* expect: E_HANDLE_LEAK */
        }
        close(client);
    }
    close(listener);
}
