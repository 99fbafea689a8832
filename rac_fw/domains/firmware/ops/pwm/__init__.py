"""PWM operations: a fixed period/duty output and a triangle fade.

This package holds one op spec per module; shared field types live here."""

from __future__ import annotations

OUTPUT_DESCRIPTION = (
    "Board LED (name or label such as led0) or a pin declared in resources.pins with a timer "
    "channel function such as TIM1_CH1 (STM32) / GPIO (nRF PWM, ESP32 LEDC route any pin)."
)
