"""PWM operations: a fixed period/duty output and a triangle fade.

This package holds one op spec per module; shared field types live here."""

from __future__ import annotations

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import has_dt_label

OUTPUT_DESCRIPTION = (
    "Board LED (name or label such as led0) or a pin declared in resources.pins with a timer "
    "channel function such as TIM1_CH1 (STM32) / GPIO (nRF PWM, ESP32 LEDC route any pin)."
)


def has_pwm_leds(target: Target) -> bool:
    """The board devicetree has pwm-leds children (``pwm-led0`` aliases or ``<colour>_pwm_led`` labels)."""
    return has_dt_label(target, r"pwm-led\d+", r"\w+_pwm_led")
