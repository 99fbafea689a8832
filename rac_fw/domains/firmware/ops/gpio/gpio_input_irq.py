"""The ``gpio_input_irq`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import attached, reaction_symbols
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority, Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class GpioInputIrq(Operation):
    """Configure a button input with an edge interrupt and software debounce.

    The interrupt only records the event; to process it in a thread add an ``isr_handoff`` whose
    ``source`` is this operation's ``name``, or attach reactions to its ``edge`` event (``react``,
    ``react_led``).
    """

    op: Literal["gpio_input_irq"]
    button: Name = Field(description="Board button (name or label such as sw0) or a declared GPIO pin.")
    edge: Literal["rising", "falling", "both"] = Field(description="Electrical edge that raises the IRQ.")
    debounce_ms: int = Field(default=20, ge=0, le=1000, description="Ignore further edges for this long.")
    pull: Literal["up", "down", "none"] | None = Field(
        default=None, description="Internal pull resistor; None = what the board wiring needs."
    )
    irq_priority: IrqPriority | None = None


def _zephyr(b: ZephyrBuilder, index: int, op: GpioInputIrq) -> dict[str, Any]:
    oid = b.ids[index]
    b.app.includes.add("zephyr/sys/atomic.h")
    pull = {"up": "GPIO_PULL_UP", "down": "GPIO_PULL_DOWN"}.get(op.pull or "", "")
    edge = {"rising": "GPIO_INT_EDGE_RISING", "falling": "GPIO_INT_EDGE_FALLING", "both": "GPIO_INT_EDGE_BOTH"}
    return {
        "id": oid,
        "spec": b.gpio_spec("button", op.button, f"operations.{index}.button", "button", oid),
        "flags": "GPIO_INPUT" + (f" | {pull}" if pull else ""),
        "edge": edge[op.edge],
        "debounce_ms": op.debounce_ms,
        "handoffs": b.handoffs(index),
        "reactions": attached(b, index),
        "hooks": b.hooks(index, "edge"),
        "setup": True,
    }


def _espidf(b: EspIdfBuild, index: int, op: GpioInputIrq) -> dict[str, Any]:
    gpio, active_low = b.io(op.button, "button", f"operations[{index}]")
    edges = {"rising": "GPIO_INTR_POSEDGE", "falling": "GPIO_INTR_NEGEDGE", "both": "GPIO_INTR_ANYEDGE"}
    b.gpio_isr_flags = b.intr_flags(op.irq_priority)
    return {"gpio": gpio, "active_low": active_low, "pull": op.pull or ("up" if active_low else "down"),
            "intr": edges[op.edge], "reactions": reaction_symbols(b, index),
            "hooks": b.hooks(index, "edge")}  # fmt: skip


def _hal(b: HalBuild, index: int, op: GpioInputIrq) -> dict[str, Any]:
    view = b.base_view(index, op)
    pin = b.input_view(view, op.button, op.pull, f"operations[{index}]")
    # The plan's edge is electrical, as HAL's GPIO_MODE_IT_* names it.
    rising, falling = op.edge in ("rising", "both"), op.edge in ("falling", "both")
    view["mode"] = (
        "GPIO_MODE_IT_RISING_FALLING"
        if rising and falling
        else ("GPIO_MODE_IT_RISING" if rising else "GPIO_MODE_IT_FALLING")
    )
    line = pin.number
    name = f"EXTI{line}" if line <= 4 else ("EXTI9_5" if line <= 9 else "EXTI15_10")
    view["irq"] = b.irq("EXTI", name)
    view["priority"] = 5 if op.irq_priority is None else op.irq_priority
    view["hooks"] = b.hooks(index, "edge")
    b.exti.setdefault(view["irq"], []).append(view)
    return view


SPEC = OpSpec(
    model=GpioInputIrq,
    family="gpio",
    flags=frozenset({Flag.ISR_CONTEXT}),
    events=("edge",),
    endpoints={"button": "button"},
    realizations={
        "zephyr": Realization(template="gpio", view=_zephyr, quiet=True, behaviour=frozenset({"event:edge"})),
        "espidf": Realization(template="gpio", view=_espidf, quiet=True, behaviour=frozenset({"event:edge"})),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=frozenset({"event:edge"})),
    },
)
