"""Resolving a plan's names against its resources and the board facts, and the pins it claims.

A plan refers to LEDs and buttons by board name or devicetree label (``led0``, ``ld1_green``,
``sw0``) or by a pin it declares; operations on the console UART implicitly take the console pins.
``claims`` lists every (pin, signal, owner) the plan takes, which the pin obligations judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rac_fw.domains.firmware.facts.model import Pin, Target
from rac_fw.domains.firmware.facts.query import board_button, board_led
from rac_fw.domains.firmware.ops.uart.uart_line_read import UartLineRead
from rac_fw.domains.firmware.ops.uart.uart_print import UartPrint
from rac_fw.domains.firmware.ops.uart.uart_rx_irq import UartRxIrq
from rac_fw.domains.firmware.plan.channels import AdcDtChannel, AdcPinChannel
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.paths import PathPart
from rac_fw.domains.firmware.plan.registry import spec

UartOp = UartPrint | UartRxIrq | UartLineRead


def endpoint_pin(plan: Plan, target: Target, name: str, output: bool) -> str | None:
    """The physical pin behind an LED/output (``output``) or button name, or None if unknown."""
    declared = plan.pin_use(name)
    if declared is not None:
        return declared.pin
    found = board_led(target, name) if output else board_button(target, name)
    return found.pin if found else None


def uart_instance(target: Target, op: UartOp) -> str | None:
    """The UART an operation uses: its ``uart`` or the board console's."""
    if op.uart is not None:
        return op.uart
    return target.board.console.uart if target.board.console else None


def is_console(target: Target, instance: str | None) -> bool:
    console = target.board.console
    return console is not None and instance is not None and instance.upper() == console.uart.upper()


@dataclass(frozen=True)
class Claim:
    """A pin the plan takes: which signal, for whom, and where in the plan it was taken."""

    pin: str
    signal: str
    owner: str
    """The plan or board object that holds the pin (shown in evidence)."""
    key: str
    """Identity for conflicts: two claims with the same key are the same use, not a conflict."""
    path: list[PathPart]
    declared: bool
    """True when the plan chose the pin itself (it can simply pick another)."""
    driver: int | None = None
    """Index of the operation driving this output, when an operation drives it (two drivers conflict)."""


def claims(plan: Plan, target: Target) -> list[Claim]:
    """Every pin use of the plan, in plan order (resources first, then operations)."""
    found: list[Claim] = []
    for i, use in enumerate(plan.resources.pins):
        found.append(Claim(use.pin, use.function, use.name, f"pin:{use.name}", ["resources", "pins", i, "pin"], True))
    for i, device in enumerate(plan.resources.devices):
        if device.chip_select:
            path: list[PathPart] = ["resources", "devices", i, "chip_select"]
            found.append(Claim(device.chip_select, "GPIO", device.name, f"cs:{device.name}", path, True))
    for i, op in enumerate(plan.operations):
        base: list[PathPart] = ["operations", i]
        for field, role in spec(op.op).endpoints.items():
            name = getattr(op, field)
            if name is None:  # an optional endpoint the operation does not use (sleep without a wake pin)
                continue
            declared = plan.pin_use(name)
            if role == "led":
                led = None if declared else board_led(target, name)
                if declared is not None:
                    key = f"pin:{declared.name}"
                    found.append(Claim(declared.pin, declared.function, declared.name, key, [*base, field], False, i))
                elif led is not None:
                    found.append(Claim(led.pin, "GPIO", led.name, f"led:{led.name}", [*base, field], False, driver=i))
            else:
                button = None if declared else board_button(target, name)
                if button is not None:
                    found.append(Claim(button.pin, "GPIO", button.name, f"in:{button.name}", [*base, field], False))
        if isinstance(op, UartPrint | UartRxIrq | UartLineRead):
            console = target.board.console
            if console is not None and is_console(target, uart_instance(target, op)):
                for pin, suffix in ((console.tx, "TX"), (console.rx, "RX")):
                    if pin in target.pins:
                        signal = f"{console.uart}_{suffix}"
                        found.append(Claim(pin, signal, "console", "console", [*base, "uart"], False))
        channels = getattr(op, "channels", None) or ([op.channel] if hasattr(op, "channel") else [])
        for j, channel in enumerate(channels):
            if isinstance(channel, AdcPinChannel | AdcDtChannel) and channel.pin is not None:
                where = [*base, "channels", j, "pin"] if hasattr(op, "channels") else [*base, "channel", "pin"]
                owner = op.name or f"operations[{i}]"
                found.append(Claim(channel.pin, "ANALOG", owner, f"adc:{i}:{j}", where, True))
    return found


def wired_signals(text: str) -> set[str]:
    """Signals named in a board-wiring note (``"I2C1_SCL (Audio_SCL …)"`` → ``{"I2C1_SCL"}``)."""
    return set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", text))


def describe_pin(pin: Pin, signal: str) -> str:
    """``PD5 (USART2_TX, AF7)`` — what a relaxation suggests."""
    af = pin.af(signal)
    return f"{pin.name} ({signal}, AF{af})" if af is not None else f"{pin.name} ({signal})"
