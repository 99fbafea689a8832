"""PWM operations: a fixed period/duty output and a triangle fade."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name

_OUTPUT = (
    "Board LED (name or label such as led0) or a pin declared in resources.pins with a timer "
    "channel function such as TIM1_CH1 (STM32) / GPIO (nRF PWM, ESP32 LEDC route any pin)."
)


class PwmFixed(Operation):
    """Drive ``output`` with a constant PWM period and duty cycle."""

    op: Literal["pwm_fixed"]
    output: Name = Field(description=_OUTPUT)
    period_us: int = Field(ge=1, le=1_000_000, description="PWM period in microseconds.")
    duty_percent: float = Field(ge=0, le=100, description="High time as a percentage of the period.")


class PwmFade(Operation):
    """Triangle fade: duty rises by ``step_percent`` every ``interval_ms`` to 100 %, then back down."""

    op: Literal["pwm_fade"]
    output: Name = Field(description=_OUTPUT)
    period_us: int = Field(default=1000, ge=1, le=1_000_000, description="PWM period in microseconds.")
    step_percent: float = Field(gt=0, le=50, description="Duty change per step, in percent.")
    interval_ms: int = Field(ge=1, le=60_000, description="Time between steps.")
    ramp_down: bool = Field(default=True, description="Fade back down (triangle) instead of restarting.")
