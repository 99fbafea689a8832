"""The ``pwm_fixed`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.pwm import OUTPUT_DESCRIPTION
from rac_fw.domains.firmware.ops.spec import OpSpec
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class PwmFixed(Operation):
    """Drive ``output`` with a constant PWM period and duty cycle."""

    op: Literal["pwm_fixed"]
    output: Name = Field(description=OUTPUT_DESCRIPTION)
    period_us: int = Field(ge=1, le=1_000_000, description="PWM period in microseconds.")
    duty_percent: float = Field(ge=0, le=100, description="High time as a percentage of the period.")


SPEC = OpSpec(model=PwmFixed, family="pwm", flags=frozenset())
