"""The ``gpio_input_irq`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority, Name


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


SPEC = OpSpec(
    model=GpioInputIrq,
    family="gpio",
    flags=frozenset({Flag.ISR_CONTEXT}),
    endpoints={"button": "button"},
    realizations={
        "zephyr": Realization(template="gpio"),
        "espidf": Realization(template="gpio"),
        "hal": Realization(template="ops"),
    },
)
