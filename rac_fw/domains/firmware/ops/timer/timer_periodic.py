"""The ``timer_periodic`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from rac_fw.domains.firmware.ops.timer import (
    TimedOperation,
    period_range,
    realizations,
    source_available,
    source_named,
)
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec


class TimerPeriodic(TimedOperation):
    """Run a callback every period (in timer-interrupt context; hand work off with ``isr_handoff``)."""

    op: Literal["timer_periodic"]


SPEC = OpSpec(
    model=TimerPeriodic,
    family="timer",
    flags=frozenset({Flag.ISR_CONTEXT}),
    events=("expiry",),
    realizations=realizations(),
    checks=(source_available, source_named, period_range),
    codes=("E_TARGET_UNSUPPORTED", "E_NO_PERIPHERAL", "E_TIMER_RANGE"),
)
