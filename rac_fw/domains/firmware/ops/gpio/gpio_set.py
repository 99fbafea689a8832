"""The ``gpio_set`` operation: its model, its spec and its realization on every framework."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Action, ActionParam, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class GpioSet(Operation):
    """Switch an LED or output pin on (active) or off at start-up and keep it there.

    ``led`` names a board LED (devicetree label such as ``led1``, or the board's name for it) or a pin
    declared in ``resources.pins`` with function GPIO. ``active`` is the logical state: an active-low LED
    is driven low to be on; the tool takes the polarity from the board facts.
    """

    op: Literal["gpio_set"]
    led: Name
    active: bool = Field(default=True, description="Logical state: true = lit / asserted, false = dark / released.")


def _zephyr(b: ZephyrBuilder, index: int, op: GpioSet) -> dict[str, Any]:
    oid = b.ids[index]
    return {
        "id": oid,
        "spec": b.gpio_spec("led", op.led, f"operations.{index}.led", "led", oid),
        "flags": "GPIO_OUTPUT_ACTIVE" if op.active else "GPIO_OUTPUT_INACTIVE",
        "setup": True,
    }


def _espidf(b: EspIdfBuild, index: int, op: GpioSet) -> dict[str, Any]:
    gpio, active_low = b.io(op.led, "led", f"operations[{index}]")
    if b.behaviour_uses(index):
        # The actions may run in an interrupt handler: gpio_set_level stays callable with the cache off.
        b.sdkconfig["CONFIG_GPIO_CTRL_FUNC_IN_IRAM"] = "y"
    return {"gpio": gpio, "level": int(op.active != active_low), "active_low": active_low, "outputs": {}}


def _hal(b: HalBuild, index: int, op: GpioSet) -> dict[str, Any]:
    # CubeMX's way: MX_GPIO_Init writes the output level before it configures the pin, so the pin
    # never glitches to the other level; nothing remains for the loop.
    view = b.base_view(index, op)
    pin, active_low = b.io(op.led, "led", f"operations[{index}]")
    b.ports.add(pin.port)
    b.outputs[pin.name] = {"pin": pin, "idle": "GPIO_PIN_SET" if op.active != active_low else "GPIO_PIN_RESET"}
    view.update(pin=pin, active_low=active_low, outputs={})
    return view


def _baremetal(b: BaremetalBuild, index: int, op: GpioSet) -> None:
    endpoint = b.bound.led(op.led)
    ctx = b.base(index, op) | {
        "pin": b.gpio_pin(endpoint.pin),
        "high": op.active != endpoint.active_low,
        "active": op.active,
        "gpio_template": b.gpio_template(),
    }
    ctx["active_low"] = endpoint.active_low
    b.emit("ops/gpio_set", ctx)


#: What a behaviour may do with the output (``act: led.toggle``): the logical level, polarity from the board.
#: A driver may refuse a level (Zephyr's gpio_pin_set_dt returns an errno): ``ok`` captures it; a bare-metal
#: register write always succeeds.
ACTIONS = {
    "on": Action("Drive it to its active level (an LED lights).", fails=True),
    "off": Action("Drive it to its inactive level.", fails=True),
    "toggle": Action("Invert its level.", fails=True),
    "set": Action("Drive it on when `level` is true, off when false.",
                  params={"level": ActionParam("expr", "true = on", type="bool")}, fails=True),
}  # fmt: skip


SPEC = OpSpec(
    model=GpioSet,
    family="gpio",
    endpoints={"led": "led"},
    realizations={
        "zephyr": Realization(template="gpio", view=_zephyr, quiet=True,
                              behaviour=frozenset(f"action:{a}" for a in ACTIONS)),
        "espidf": Realization(template="gpio_set", view=_espidf, quiet=True,
                              behaviour=frozenset(f"action:{a}" for a in ACTIONS)),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=frozenset(f"action:{a}" for a in ACTIONS)),
        "baremetal": Realization(template="ops/gpio_set", view=_baremetal,
                                 behaviour=frozenset(f"action:{a}" for a in ACTIONS)),
    },
    actions=ACTIONS,
)
