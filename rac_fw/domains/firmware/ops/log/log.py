"""The ``log`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Message, Name


class Log(Operation):
    """Print ``message`` followed by ``name=value`` for each operation named in ``values``.

    Values come from value-producing operations (adc_*, gpio_read, sensor_read, i2c_transfer,
    spi_transfer). ``in_isr_of`` would log from inside that operation's interrupt handler, which is
    blocking and forbidden (E_ISR_BLOCKING); log from a handoff thread instead.
    """

    op: Literal["log"]
    message: Message
    values: list[Name] = Field(default_factory=list, max_length=8)
    level: Literal["dbg", "inf", "wrn", "err"] = "inf"
    interval_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Repeat period, or once.")
    in_isr_of: Name | None = Field(default=None, description="Operation whose ISR would run this log.")


SPEC = OpSpec(
    model=Log,
    family="log",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="log"),
        "espidf": Realization(template="log"),
        "hal": Realization(template="ops"),
    },
)
