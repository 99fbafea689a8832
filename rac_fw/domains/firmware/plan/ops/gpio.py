"""GPIO operations: blink an LED, react to a button edge, poll a button."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority, Name


class GpioBlink(Operation):
    """Toggle an LED forever (or ``count`` times) so it completes one on/off cycle every ``period_ms``.

    ``led`` names a board LED (facts: board.leds name or devicetree label such as ``led0``) or a pin
    declared in ``resources.pins`` with function GPIO.
    """

    op: Literal["gpio_blink"]
    led: Name
    period_ms: int = Field(ge=2, le=3_600_000, description="Full on+off cycle time in milliseconds.")
    count: int | None = Field(default=None, ge=1, le=1_000_000, description="Cycles, or None = forever.")


class GpioInputIrq(Operation):
    """Configure a button input with an edge interrupt and software debounce.

    The interrupt only records the event; to process it in a thread add an ``isr_handoff`` whose
    ``source`` is this operation's ``name``.
    """

    op: Literal["gpio_input_irq"]
    button: Name = Field(description="Board button (name or label such as sw0) or a declared GPIO pin.")
    edge: Literal["rising", "falling", "both"] = Field(description="Electrical edge that raises the IRQ.")
    debounce_ms: int = Field(default=20, ge=0, le=1000, description="Ignore further edges for this long.")
    pull: Literal["up", "down", "none"] | None = Field(
        default=None, description="Internal pull resistor; None = what the board wiring needs."
    )
    irq_priority: IrqPriority | None = None


class GpioRead(Operation):
    """Poll a button's logical level (active level already accounted for) every ``interval_ms``."""

    op: Literal["gpio_read"]
    button: Name = Field(description="Board button (name or label such as sw0) or a declared GPIO pin.")
    interval_ms: int = Field(default=100, ge=1, le=3_600_000, description="Polling period.")
