"""Resolving a plan's names against its resources and the board facts, for the pin obligations.

A plan refers to LEDs and buttons by board name or devicetree label (``led0``, ``ld1_green``,
``sw0``) or by a pin it declares. The pins a plan claims are found once in ``firmware.claims``
(re-exported here for the report page, ``rac_fw.report.page``).
"""

from __future__ import annotations

import re

from rac_fw.domains.firmware.claims import Claim, claims
from rac_fw.domains.firmware.facts.model import Pin, Target
from rac_fw.domains.firmware.facts.query import board_button, board_led
from rac_fw.domains.firmware.plan.model import Plan

__all__ = ["Claim", "claims", "describe_pin", "endpoint_pin", "wired_signals"]

def endpoint_pin(plan: Plan, target: Target, name: str, output: bool) -> str | None:
    """The physical pin behind an LED/output (``output``) or button name, or None if unknown."""
    declared = plan.pin_use(name)
    if declared is not None:
        return declared.pin
    found = board_led(target, name) if output else board_button(target, name)
    return found.pin if found else None


def wired_signals(text: str) -> set[str]:
    """Signals named in a board-wiring note (``"I2C1_SCL (Audio_SCL …)"`` → ``{"I2C1_SCL"}``)."""
    return set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", text))


def describe_pin(pin: Pin, signal: str) -> str:
    """``PD5 (USART2_TX, AF7)`` — what a relaxation suggests."""
    af = pin.af(signal)
    return f"{pin.name} ({signal}, AF{af})" if af is not None else f"{pin.name} ({signal})"
