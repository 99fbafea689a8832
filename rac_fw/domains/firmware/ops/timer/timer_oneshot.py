"""The ``timer_oneshot`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.ops.timer import TimedOperation


class TimerOneshot(TimedOperation):
    """Run a callback once, one period after start (interrupt context)."""

    op: Literal["timer_oneshot"]


SPEC = OpSpec(
    model=TimerOneshot,
    family="timer",
    flags=frozenset({Flag.ISR_CONTEXT}),
    realizations={
        "zephyr": Realization(template="timer"),
        "espidf": Realization(template="timer"),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/timer"),
    },
)
