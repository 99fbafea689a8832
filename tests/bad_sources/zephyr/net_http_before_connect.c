/* BAD (order): the HTTP request is written to a socket that was never connected. */
#include <zephyr/kernel.h>
#include <zephyr/net/socket.h>
#include <zephyr/net/http/client.h>
#include <errno.h>
#include <string.h>

static uint8_t rx[512];

static int response(struct http_response *rsp, enum http_final_call final_data, void *user_data)
{
	ARG_UNUSED(rsp);
	ARG_UNUSED(final_data);
	ARG_UNUSED(user_data);
	return 0;
}

int main(void)
{
	struct http_request req;
	int err;
	int sock = zsock_socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

	if (sock < 0) {
		return -errno;
	}
	memset(&req, 0, sizeof(req));
	req.method = HTTP_GET;
	req.url = "/";
	req.host = "192.0.2.1";
	req.protocol = "HTTP/1.1";
	req.response = response;
	req.recv_buf = rx;
	req.recv_buf_len = sizeof(rx);
	err = http_client_req(sock, &req, 5000, NULL); /* expect: E_CALL_ORDER */
	if (err >= 0 && zsock_connect(sock, NULL, 0) < 0) {
		err = -errno;
	}
	(void)zsock_close(sock);
	return err;
}
