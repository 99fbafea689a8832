/* BAD (kconfig): the HTTP client is called but prj.conf does not enable CONFIG_HTTP_CLIENT. expect: E_KCONFIG_MISSING */
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
	struct sockaddr_in addr = {0};
	struct http_request req;
	int err;
	int sock = zsock_socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

	if (sock < 0) {
		return -errno;
	}
	if (zsock_connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		err = -errno;
		(void)zsock_close(sock);
		return err;
	}
	memset(&req, 0, sizeof(req));
	req.method = HTTP_GET;
	req.url = "/";
	req.host = "192.0.2.1";
	req.protocol = "HTTP/1.1";
	req.response = response;
	req.recv_buf = rx;
	req.recv_buf_len = sizeof(rx);
	err = http_client_req(sock, &req, 5000, NULL);
	(void)zsock_close(sock);
	return err;
}
