"""The ``pwm_fixed`` operation: its model and its spec."""

from __future__ import annotations

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


class PwmFixed(Operation):
    """Drive ``output`` with a constant PWM period and duty cycle."""

    op: Literal["pwm_fixed"]
    output: Name = Field(description=OUTPUT_DESCRIPTION)
    period_us: int = Field(ge=1, le=1_000_000, description="PWM period in microseconds.")
    duty_percent: float = Field(ge=0, le=100, description="High time as a percentage of the period.")


def _zephyr(b: ZephyrBuilder, index: int, op: PwmFixed) -> dict[str, Any]:
    view = zephyr_output(b, index, op)
    view.update(pulse_ns=round(view["period_ns"] * op.duty_percent / 100), step={"period_ms": None})
    return view


def _espidf(b: EspIdfBuild, index: int, op: PwmFixed) -> dict[str, Any]:
    view = espidf_output(b, index, op)
    view["duty"] = round(op.duty_percent / 100 * view["ledc"]["max_duty"])
    return view


def _hal(b: HalBuild, index: int, op: PwmFixed) -> dict[str, Any]:
    view = b.base_view(index, op)
    channel = b.pwm_view(view, op, f"operations[{index}]")
    channel["pulse"] = round(op.duty_percent / 100 * view["top"])
    return view


def _period(plan: Plan, target: Target, framework: str, index: int, op: PwmFixed) -> list[Evidence]:
    """The PWM counter must count the period in 100 steps at least (a duty in whole percent); the counter
    itself is the shared timing concern's, imported when it runs (the obligations import the plan model)."""
    from rac_fw.domains.firmware.obligations.timing import pwm_period

    return pwm_period(plan, target, framework, index, op, needed=100)

SPEC = OpSpec(
    model=PwmFixed,
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
