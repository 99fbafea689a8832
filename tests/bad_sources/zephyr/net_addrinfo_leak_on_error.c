/* BAD (release): the address list from zsock_getaddrinfo is not freed when the socket cannot be opened. */
#include <zephyr/kernel.h>
#include <zephyr/net/socket.h>
#include <errno.h>

static int resolve(void)
{
	struct zsock_addrinfo hints = {0};
	struct zsock_addrinfo *found = NULL;
	int sock;

	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (zsock_getaddrinfo("example.com", "80", &hints, &found) != 0 || found == NULL) {
		return -EHOSTUNREACH;
	}
	sock = zsock_socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (sock < 0) {
		return -errno; /* expect: E_HANDLE_LEAK */
	}
	zsock_freeaddrinfo(found);
	return zsock_close(sock);
}

int main(void)
{
	return resolve();
}
