"""Firmware update and boot: confirm the running image after a self-test, stream an image into the secondary slot."""
