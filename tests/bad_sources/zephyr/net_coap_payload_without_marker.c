/* BAD (order): the CoAP payload is appended without the 0xFF payload marker before it. */
#include <zephyr/kernel.h>
#include <zephyr/net/coap.h>

static uint8_t buf[128];

int main(void)
{
	struct coap_packet request;
	int err;

	err = coap_packet_init(&request, buf, sizeof(buf), COAP_VERSION_1, COAP_TYPE_CON, 0U, NULL, COAP_METHOD_POST,
			       coap_next_id());
	if (err < 0) {
		return err;
	}
	return coap_packet_append_payload(&request, (const uint8_t *)"21.5", 4); /* expect: E_CALL_MISSING */
}
