"""Sensor read through the framework's sensor API (Zephyr ``sensor_sample_fetch``/``channel_get``)."""
