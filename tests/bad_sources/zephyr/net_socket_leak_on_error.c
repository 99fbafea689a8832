/* BAD (release): the socket is not closed when connect fails. */
#include <zephyr/kernel.h>
#include <zephyr/net/socket.h>
#include <errno.h>

static int exchange(void)
{
	struct sockaddr_in addr = {0};
	int sock = zsock_socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

	if (sock < 0) {
		return -errno;
	}
	addr.sin_family = AF_INET;
	addr.sin_port = htons(7);
	if (zsock_connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		return -errno; /* expect: E_HANDLE_LEAK */
	}
	if (zsock_send(sock, "hi", 2, 0) < 0) {
		(void)zsock_close(sock);
		return -errno;
	}
	return zsock_close(sock);
}

int main(void)
{
	return exchange();
}
