"""The ``timer_oneshot`` operation: its model and its spec."""

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


class TimerOneshot(TimedOperation):
    """Run a callback once, one period after start (interrupt context)."""

    op: Literal["timer_oneshot"]


SPEC = OpSpec(
    model=TimerOneshot,
    family="timer",
    flags=frozenset({Flag.ISR_CONTEXT}),
    events=("expiry",),
    realizations=realizations(),
    checks=(source_available, source_named, period_range),
    codes=("E_TARGET_UNSUPPORTED", "E_NO_PERIPHERAL", "E_TIMER_RANGE"),
)
