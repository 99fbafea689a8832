/* BAD (order): data is sent on a TCP socket before it is connected. */
#include <zephyr/kernel.h>
#include <zephyr/net/socket.h>

int main(void)
{
	struct sockaddr_in addr = {0};
	int sock = zsock_socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

	if (sock < 0) {
		return -errno;
	}
	addr.sin_family = AF_INET;
	addr.sin_port = htons(7);
	if (zsock_send(sock, "hi", 2, 0) < 0) { /* expect: E_CALL_ORDER */
		(void)zsock_close(sock);
		return -errno;
	}
	if (zsock_connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		(void)zsock_close(sock);
		return -errno;
	}
	return zsock_close(sock);
}
