/* BAD (order): an option is appended to a CoAP packet before coap_packet_init set it up. */
#include <zephyr/kernel.h>
#include <zephyr/net/coap.h>

static uint8_t buf[128];

int main(void)
{
	struct coap_packet request;
	int err;

	err = coap_packet_append_option(&request, COAP_OPTION_URI_PATH, (const uint8_t *)"temp", 4); /* expect: E_CALL_ORDER */
	if (err < 0) {
		return err;
	}
	return coap_packet_init(&request, buf, sizeof(buf), COAP_VERSION_1, COAP_TYPE_CON, 0U, NULL, COAP_METHOD_GET,
				coap_next_id());
}
