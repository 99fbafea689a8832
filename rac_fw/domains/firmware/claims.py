"""The pins a plan takes: every (pin, signal, owner) its resources and operations claim, found once.

The pin obligations judge these claims (conflicts, reservations, routing), and the radio, reference and
support rules ask them which pins are taken; a lowering never does (it reads ``BoundPlan.pins_in_use``).
Operations on the console UART (``Flag.CONSOLE``) take the console pins implicitly; LED/button fields
(``OpSpec.endpoints``) take the board item's pin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rac_fw.domains.firmware.facts.query import board_button, board_led
from rac_fw.domains.firmware.plan.channels import AdcDtChannel, AdcPinChannel
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag

if TYPE_CHECKING:  # op modules import this one while the plan model is being built from them
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.base import Operation
    from rac_fw.domains.firmware.plan.model import Plan
    from rac_fw.domains.firmware.plan.paths import PathPart


def uart_instance(target: Target, op: Operation) -> str | None:
    """The UART a console operation (``Flag.CONSOLE``) uses: its ``uart`` or the board console's."""
    named: str | None = getattr(op, "uart", None)
    if named is not None:
        return named
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
        if spec(op.op).has(Flag.CONSOLE):
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
