"""The ``pwm_fixed`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.pwm import OUTPUT_DESCRIPTION
from rac_fw.domains.firmware.ops.spec import OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class PwmFixed(Operation):
    """Drive ``output`` with a constant PWM period and duty cycle."""

    op: Literal["pwm_fixed"]
    output: Name = Field(description=OUTPUT_DESCRIPTION)
    period_us: int = Field(ge=1, le=1_000_000, description="PWM period in microseconds.")
    duty_percent: float = Field(ge=0, le=100, description="High time as a percentage of the period.")


SPEC = OpSpec(
    model=PwmFixed,
    family="pwm",
    flags=frozenset(),
    endpoints={"output": "led"},
    realizations={
        "zephyr": Realization(template="pwm", available=lambda t: has_dt_label(t, r"pwm-led\d+", r"\w+_pwm_led")),
        "espidf": Realization(template="pwm"),
        "hal": Realization(template="ops"),
    },
)
