"""PWM operations: a fixed period/duty output and a triangle fade.

This package holds one op spec per module; shared field types live here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import board_led, exact_name, has_dt_label, pwm_led_on

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

OUTPUT_DESCRIPTION = (
    "Board LED (name or label such as led0) or a pin declared in resources.pins with a timer "
    "channel function such as TIM1_CH1 (STM32) / GPIO (nRF PWM, ESP32 LEDC route any pin)."
)


def has_pwm_leds(target: Target) -> bool:
    """The board devicetree has pwm-leds children (``pwm-led0`` aliases or ``<colour>_pwm_led`` labels)."""
    return has_dt_label(target, r"pwm-led\d+", r"\w+_pwm_led")


def zephyr_dimmable(plan: Plan, target: Target, index: int, op: Any) -> list[Evidence]:
    """Zephyr drives PWM outputs through the board's ``pwm-leds`` nodes: the output must be an LED one
    of them dims (a declared pin would need pin control the lowering does not generate)."""
    declared = plan.pin_use(op.output)
    led = None if declared else board_led(target, op.output)
    pin = declared.pin if declared else (led.pin if led else None)
    if pin is None or pwm_led_on(target, pin) is not None:
        return []
    dimmable = [x for x in target.board.leds if pwm_led_on(target, x.pin) is not None]
    return [
        Evidence(
            code="E_TARGET_UNSUPPORTED",
            message=f"{op.output!r} ({pin}) is dimmed by no pwm-leds node of the {target.board.name} devicetree; "
            f"Zephyr PWM outputs: {', '.join(f'{exact_name(x)} ({x.pin})' for x in dimmable) or 'none'}",
            location=f"operations[{index}].output",
            objects=[op.output, pin],
            relaxations=[
                Relaxation(
                    description=f"drive {exact_name(x)} ({x.pin})",
                    patch=[{"op": "replace", "path": ["operations", index, "output"], "value": exact_name(x)}],
                )
                for x in dimmable[:3]
            ],
        )
    ]


def zephyr_output(b: ZephyrBuilder, index: int, op: Any) -> dict[str, Any]:
    """The pwm-leds spec of ``op.output`` and the period in ns; the operation adds its pulse or step."""
    b.app.includes.add("zephyr/drivers/pwm.h")
    return {"spec": b.pwm_spec(index, op.output), "period_ns": op.period_us * 1000, "setup": True}


def espidf_output(b: EspIdfBuild, index: int, op: Any) -> dict[str, Any]:
    """The LEDC channel driving ``op.output`` (its GPIO, polarity and timer); the operation adds its duty."""
    where = f"operations[{index}]"
    gpio, active_low = b.io(op.output, "led", where)
    return {"gpio": gpio, "invert": int(active_low), "ledc": b.ledc(op.period_us, where)}
