"""The ``timer_periodic`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.ops.timer import TimedOperation


class TimerPeriodic(TimedOperation):
    """Run a callback every period (in timer-interrupt context; hand work off with ``isr_handoff``)."""

    op: Literal["timer_periodic"]


SPEC = OpSpec(
    model=TimerPeriodic,
    family="timer",
    flags=frozenset({Flag.ISR_CONTEXT}),
    realizations={
        "zephyr": Realization(template="timer"),
        "espidf": Realization(template="timer"),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/timer"),
    },
)
