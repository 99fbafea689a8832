"""The ``gpio_blink`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class GpioBlink(Operation):
    """Toggle an LED forever (or ``count`` times) so it completes one on/off cycle every ``period_ms``.

    ``led`` names a board LED (facts: board.leds name or devicetree label such as ``led0``) or a pin
    declared in ``resources.pins`` with function GPIO.
    """

    op: Literal["gpio_blink"]
    led: Name
    period_ms: int = Field(ge=2, le=3_600_000, description="Full on+off cycle time in milliseconds.")
    count: int | None = Field(default=None, ge=1, le=1_000_000, description="Cycles, or None = forever.")


def _zephyr(b: ZephyrBuilder, index: int, op: GpioBlink) -> dict[str, Any]:
    oid = b.ids[index]
    half = max(1, op.period_ms // 2)
    count = op.count * 2 if op.count is not None else None
    return {
        "id": oid,
        "spec": b.gpio_spec("led", op.led, f"operations.{index}.led", "led", oid),
        "setup": True,
        "step": {"period_ms": half, "count": count},
    }


def _espidf(b: EspIdfBuild, index: int, op: GpioBlink) -> dict[str, Any]:
    gpio, active_low = b.io(op.led, "led", f"operations[{index}]")
    return {"gpio": gpio, "active_low": active_low, "half_ms": max(1, op.period_ms // 2),
            "task": b.thread(None, b.symbol(index, op))}  # fmt: skip


SPEC = OpSpec(
    model=GpioBlink,
    family="gpio",
    flags=frozenset(),
    endpoints={"led": "led"},
    realizations={
        "zephyr": Realization(template="gpio", view=_zephyr),
        "espidf": Realization(template="gpio", view=_espidf),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/gpio_blink"),
    },
)
