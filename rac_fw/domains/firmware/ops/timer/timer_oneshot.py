"""The ``timer_oneshot`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rac_fw.domains.firmware.ops.timer import TimedOperation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class TimerOneshot(TimedOperation):
    """Run a callback once, one period after start (interrupt context)."""

    op: Literal["timer_oneshot"]


def _zephyr(b: ZephyrBuilder, index: int, op: TimerOneshot) -> dict[str, Any]:
    return b.timer_view(index, op, periodic=False)


def _espidf(b: EspIdfBuild, index: int, op: TimerOneshot) -> dict[str, Any]:
    return {"alarm_us": max(1, round(op.period_s * 1_000_000)), "reload": False}


SPEC = OpSpec(
    model=TimerOneshot,
    family="timer",
    flags=frozenset({Flag.ISR_CONTEXT}),
    realizations={
        "zephyr": Realization(template="timer", view=_zephyr),
        "espidf": Realization(template="timer", view=_espidf),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/timer"),
    },
)
