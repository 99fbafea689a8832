"""The ``react_led`` operation: toggle, light or darken an LED when an event happens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import Reaction, check_context, check_source, deferral, hal_context, placement
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class ReactLed(Reaction):
    """When operation ``source`` raises ``event``, toggle (or switch on / off) the LED ``led``.

    Replaces one-off "toggle an LED on a button press" code: ``source`` a ``gpio_input_irq``'s ``edge`` or a
    timer's ``expiry``. Setting a GPIO never waits, so the reaction runs in the publisher's context
    (the ISR for an interrupt source). The LED is claimed like any output (E_PIN_CONFLICT with another
    driver of it).
    """

    op: Literal["react_led"]
    led: Name = Field(description="Board LED (name or label such as led0) or a declared GPIO pin.")
    action: Literal["toggle", "on", "off"] = "toggle"


def _zephyr(b: ZephyrBuilder, index: int, op: ReactLed) -> dict[str, Any]:
    oid = b.ids[index]
    b.app.includes.add("zephyr/sys/atomic.h")
    return {
        "id": oid,
        "source": op.source,
        "event": op.event,
        "action": op.action,
        "placement": placement(b.plan, op),
        "spec": b.gpio_spec("led", op.led, f"operations.{index}.led", "led", oid),
        "setup": True,
    }


def _espidf(b: EspIdfBuild, index: int, op: ReactLed) -> dict[str, Any]:
    """ESP-IDF: ``gpio_set_level`` in the ISR (placed in IRAM by CONFIG_GPIO_CTRL_FUNC_IN_IRAM, as an IRAM
    interrupt handler needs) or in the deferral task; the LED is configured, dark, before any ISR runs."""
    gpio, active_low = b.io(op.led, "led", f"operations[{index}].led")
    where = deferral(b, index, op)
    if where == "isr":
        b.sdkconfig["CONFIG_GPIO_CTRL_FUNC_IN_IRAM"] = "y"
    return {
        "placement": where,
        "action": op.action,
        "gpio": gpio,
        "on": 0 if active_low else 1,
        "off": 1 if active_low else 0,
        "task": b.thread(None, f"{b.symbol(index, op)}_react") if where == "work" else None,
    }


def _hal(b: HalBuild, index: int, op: ReactLed) -> dict[str, Any]:
    """STM32 HAL: ``HAL_GPIO_TogglePin`` / ``HAL_GPIO_WritePin`` (a BSRR store, the toggle after an ODR read:
    never waits) in the publisher's HAL callback, or in the loop when deferred; the LED is an output
    MX_GPIO_Init drives dark before it enables any EXTI line or a timer starts, so no callback finds it
    unconfigured."""
    view = b.base_view(index, op)
    pin, active_low = b.io(op.led, "led", f"operations[{index}].led")
    b.ports.add(pin.port)
    on, off = ("GPIO_PIN_RESET", "GPIO_PIN_SET") if active_low else ("GPIO_PIN_SET", "GPIO_PIN_RESET")
    b.outputs[pin.name] = {"pin": pin, "idle": off}
    view.update(placement=hal_context(b, index, op), action=op.action, source=op.source, event=op.event,
                pin=pin, level=on if op.action == "on" else off)  # fmt: skip
    return view


SPEC = OpSpec(
    model=ReactLed,
    family="events",
    flags=frozenset({Flag.VALUE}),
    endpoints={"led": "led"},
    realizations={
        "zephyr": Realization(template="events", view=_zephyr),
        "espidf": Realization(template="events", view=_espidf),
        "hal": Realization(template="events", view=_hal),
    },
    checks=(check_source, check_context),
    codes=("E_REACTION_EVENT", "E_REACTION_CONTEXT", "E_ISR_BLOCKING", "E_UNKNOWN_RESOURCE"),
)
