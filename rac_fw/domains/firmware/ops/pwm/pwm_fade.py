"""The ``pwm_fade`` operation: its model and its spec."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.pwm import (
    OUTPUT_DESCRIPTION,
    espidf_output,
    has_pwm_leds,
    zephyr_dimmable,
    zephyr_output,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class PwmFade(Operation):
    """Triangle fade: duty rises by ``step_percent`` every ``interval_ms`` to 100 %, then back down."""

    op: Literal["pwm_fade"]
    output: Name = Field(description=OUTPUT_DESCRIPTION)
    period_us: int = Field(default=1000, ge=1, le=1_000_000, description="PWM period in microseconds.")
    step_percent: float = Field(gt=0, le=50, description="Duty change per step, in percent.")
    interval_ms: int = Field(ge=1, le=60_000, description="Time between steps.")
    ramp_down: bool = Field(default=True, description="Fade back down (triangle) instead of restarting.")


def _zephyr(b: ZephyrBuilder, index: int, op: PwmFade) -> dict[str, Any]:
    view = zephyr_output(b, index, op)
    view.update(
        step_ns=max(1, round(view["period_ns"] * op.step_percent / 100)),
        ramp_down=op.ramp_down,
        step={"period_ms": op.interval_ms},
    )
    return view


def _espidf(b: EspIdfBuild, index: int, op: PwmFade) -> dict[str, Any]:
    view = espidf_output(b, index, op)
    view.update(
        step=max(1, round(op.step_percent / 100 * view["ledc"]["max_duty"])), task=b.thread(None, b.symbol(index, op))
    )
    return view


def _hal(b: HalBuild, index: int, op: PwmFade) -> dict[str, Any]:
    view = b.base_view(index, op)
    b.pwm_view(view, op, f"operations[{index}]")
    view["step"] = max(1, round(op.step_percent / 100 * view["top"]))
    return view


def _period(plan: Plan, target: Target, framework: str, index: int, op: PwmFade) -> list[Evidence]:
    """The PWM counter must count the period in ``100 / step_percent`` steps at least (each fade step one
    count or more); the counter itself is the shared timing concern's, imported when it runs (the
    obligations import the plan model)."""
    from rac_fw.domains.firmware.obligations.timing import pwm_period

    return pwm_period(plan, target, framework, index, op, needed=math.ceil(100 / op.step_percent))

SPEC = OpSpec(
    model=PwmFade,
    family="pwm",
    needs="pwm",
    flags=frozenset(),
    endpoints={"output": "led"},
    realizations={
        "zephyr": Realization(template="pwm", view=_zephyr, available=has_pwm_leds, admits=zephyr_dimmable),
        "espidf": Realization(template="pwm", view=_espidf),
        "hal": Realization(template="ops", view=_hal),
    },
    checks=(_period,),
    codes=("E_TIMER_RANGE", "E_PWM_RESOLUTION", "E_PIN_FUNCTION"),
)
