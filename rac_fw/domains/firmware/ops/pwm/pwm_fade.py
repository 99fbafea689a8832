"""The ``pwm_fade`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.pwm import OUTPUT_DESCRIPTION
from rac_fw.domains.firmware.ops.spec import OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class PwmFade(Operation):
    """Triangle fade: duty rises by ``step_percent`` every ``interval_ms`` to 100 %, then back down."""

    op: Literal["pwm_fade"]
    output: Name = Field(description=OUTPUT_DESCRIPTION)
    period_us: int = Field(default=1000, ge=1, le=1_000_000, description="PWM period in microseconds.")
    step_percent: float = Field(gt=0, le=50, description="Duty change per step, in percent.")
    interval_ms: int = Field(ge=1, le=60_000, description="Time between steps.")
    ramp_down: bool = Field(default=True, description="Fade back down (triangle) instead of restarting.")


SPEC = OpSpec(
    model=PwmFade,
    family="pwm",
    flags=frozenset(),
    endpoints={"output": "led"},
    realizations={
        "zephyr": Realization(template="pwm", available=lambda t: has_dt_label(t, r"pwm-led\d+", r"\w+_pwm_led")),
        "espidf": Realization(template="pwm"),
        "hal": Realization(template="ops"),
    },
)
