"""Wi-Fi operations: joining an access point as a station."""
