"""Bluetooth LE operations: advertising (with connection tracking) and GATT services."""
