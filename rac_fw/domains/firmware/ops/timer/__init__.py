"""Timer operations: periodic callback and one-shot, on the kernel timer, SysTick or a hardware timer.

This package holds one op spec per module; shared field types live here."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority, PeripheralName

TimerSource = Annotated[
    Literal["kernel", "systick"] | PeripheralName,
    Field(
        description="kernel: the framework's software timer (k_timer, esp_timer); systick: the Cortex-M "
        "SysTick (bare metal); or a hardware timer instance such as TIM2 / TIMER1 / TIMG0."
    ),
]


class TimedOperation(Operation):
    period_ms: int | None = Field(default=None, ge=1, le=86_400_000)
    period_us: int | None = Field(default=None, ge=1, le=4_000_000_000)
    source: TimerSource = "kernel"
    irq_priority: IrqPriority | None = None

    @model_validator(mode="after")
    def _one_period(self) -> TimedOperation:
        if (self.period_ms is None) == (self.period_us is None):
            raise ValueError("give exactly one of period_ms or period_us")
        return self

    @property
    def period_s(self) -> float:
        """The period in seconds, whichever unit the plan used."""
        return self.period_ms / 1e3 if self.period_ms is not None else (self.period_us or 0) / 1e6
