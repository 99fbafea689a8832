"""The ``gpio_blink`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class GpioBlink(Operation):
    """Toggle an LED forever (or ``count`` times) so it completes one on/off cycle every ``period_ms``.

    ``led`` names a board LED (facts: board.leds name or devicetree label such as ``led0``) or a pin
    declared in ``resources.pins`` with function GPIO.
    """

    op: Literal["gpio_blink"]
    led: Name
    period_ms: int = Field(ge=2, le=3_600_000, description="Full on+off cycle time in milliseconds.")
    count: int | None = Field(default=None, ge=1, le=1_000_000, description="Cycles, or None = forever.")


def _zephyr(b: ZephyrBuilder, index: int, op: GpioBlink) -> dict[str, Any]:
    oid = b.ids[index]
    half = max(1, op.period_ms // 2)
    count = op.count * 2 if op.count is not None else None
    return {
        "id": oid,
        "spec": b.gpio_spec("led", op.led, f"operations.{index}.led", "led", oid),
        "setup": True,
        "step": {"period_ms": half, "count": count},
    }


def _espidf(b: EspIdfBuild, index: int, op: GpioBlink) -> dict[str, Any]:
    gpio, active_low = b.io(op.led, "led", f"operations[{index}]")
    return {"gpio": gpio, "active_low": active_low, "half_ms": max(1, op.period_ms // 2),
            "task": b.thread(None, b.symbol(index, op))}  # fmt: skip


def _hal(b: HalBuild, index: int, op: GpioBlink) -> dict[str, Any]:
    view = b.base_view(index, op)
    pin, active_low = b.io(op.led, "led", f"operations[{index}]")
    b.ports.add(pin.port)
    b.outputs[pin.name] = {"pin": pin, "idle": "GPIO_PIN_SET" if active_low else "GPIO_PIN_RESET"}
    view.update(pin=pin, half_ms=max(1, op.period_ms // 2), edges=(op.count or 0) * 2, ticks=True)
    view["period"] = view["half_ms"]
    return view


def _baremetal(b: BaremetalBuild, index: int, op: GpioBlink) -> None:
    endpoint = b.bound.endpoints.get(("led", op.led))
    if endpoint is None:
        raise b.error(f"led {op.led!r} is neither a board LED nor a declared pin")
    led = endpoint.board_item
    pin_name, what = endpoint.pin, f"board LED {led.name}" if led is not None else f"pin {op.led}"
    ctx = b.base(index, op) | {
        "pin": b.gpio_pin(pin_name),
        "what": what,
        "half_ms": max(1, op.period_ms // 2),
        "test_half_ms": min(b.BLINK_TEST_HALF_MS, max(1, op.period_ms // 2)),
        "max_toggles": 2 * op.count if op.count else None,
        "gpio_template": b.gpio_template(),
    }
    b.emit("ops/gpio_blink", ctx)


SPEC = OpSpec(
    model=GpioBlink,
    family="gpio",
    flags=frozenset(),
    endpoints={"led": "led"},
    realizations={
        "zephyr": Realization(template="gpio", view=_zephyr, quiet=True),
        "espidf": Realization(template="gpio", view=_espidf),
        "hal": Realization(template="ops", view=_hal, quiet=True),
        "baremetal": Realization(template="ops/gpio_blink", view=_baremetal),
    },
)
