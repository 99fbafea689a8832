"""CAN frames through Zephyr's CAN API (``can_send``, ``can_receive``), bitrates checked against the clock."""
