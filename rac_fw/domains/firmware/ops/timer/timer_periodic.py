"""The ``timer_periodic`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rac_fw.domains.firmware.ops.timer import TimedOperation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class TimerPeriodic(TimedOperation):
    """Run a callback every period (in timer-interrupt context; hand work off with ``isr_handoff``)."""

    op: Literal["timer_periodic"]


def _zephyr(b: ZephyrBuilder, index: int, op: TimerPeriodic) -> dict[str, Any]:
    return b.timer_view(index, op, periodic=True)


def _espidf(b: EspIdfBuild, index: int, op: TimerPeriodic) -> dict[str, Any]:
    return {"alarm_us": max(1, round(op.period_s * 1_000_000)), "reload": True}


SPEC = OpSpec(
    model=TimerPeriodic,
    family="timer",
    flags=frozenset({Flag.ISR_CONTEXT}),
    realizations={
        "zephyr": Realization(template="timer", view=_zephyr),
        "espidf": Realization(template="timer", view=_espidf),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/timer"),
    },
)
