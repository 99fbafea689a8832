"""The ``pwm_fade`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.pwm import OUTPUT_DESCRIPTION, has_pwm_leds, zephyr_dimmable
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class PwmFade(Operation):
    """Triangle fade: duty rises by ``step_percent`` every ``interval_ms`` to 100 %, then back down."""

    op: Literal["pwm_fade"]
    output: Name = Field(description=OUTPUT_DESCRIPTION)
    period_us: int = Field(default=1000, ge=1, le=1_000_000, description="PWM period in microseconds.")
    step_percent: float = Field(gt=0, le=50, description="Duty change per step, in percent.")
    interval_ms: int = Field(ge=1, le=60_000, description="Time between steps.")
    ramp_down: bool = Field(default=True, description="Fade back down (triangle) instead of restarting.")


def _zephyr(b: ZephyrBuilder, index: int, op: PwmFade) -> dict[str, Any]:
    b.app.includes.add("zephyr/drivers/pwm.h")
    period_ns = op.period_us * 1000
    return {
        "spec": b.pwm_spec(index, op.output),
        "period_ns": period_ns,
        "step_ns": max(1, round(period_ns * op.step_percent / 100)),
        "ramp_down": op.ramp_down,
        "setup": True,
        "step": {"period_ms": op.interval_ms},
    }


def _espidf(b: EspIdfBuild, index: int, op: PwmFade) -> dict[str, Any]:
    where = f"operations[{index}]"
    gpio, active_low = b.io(op.output, "led", where)
    ledc = b.ledc(op.period_us, where)
    step = max(1, round(op.step_percent / 100 * ledc["max_duty"]))
    return {
        "gpio": gpio,
        "invert": int(active_low),
        "ledc": ledc,
        "step": step,
        "task": b.thread(None, b.symbol(index, op)),
    }


def _hal(b: HalBuild, index: int, op: PwmFade) -> dict[str, Any]:
    view = b.base_view(index, op)
    b.pwm_view(view, op, f"operations[{index}]")
    view["step"] = max(1, round(op.step_percent / 100 * view["top"]))
    return view


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
)
