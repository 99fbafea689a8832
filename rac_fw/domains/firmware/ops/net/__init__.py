"""IP networking operations: UDP exchange, TCP client and server, MQTT, DNS, over the board's interface."""
