"""The ``i2c_target`` operation: answer on an I2C bus as a target (slave) holding a small register file.

Realized with Zephyr's target API (include/zephyr/drivers/i2c.h): ``i2c_target_register`` with a
``struct i2c_target_config`` (``address``, ``callbacks``) whose ``struct i2c_target_callbacks`` the
controller's driver calls from its interrupt: ``write_requested``, ``write_received`` (one byte),
``read_requested`` / ``read_processed`` (the next byte to send) and ``stop``. The protocol is the usual
register-file one (the EEPROM target sample's): the first byte written selects a register, following bytes
are written from there on, and reads continue from the selected register, wrapping at the end.

On the STM32Cube HAL (``templates/hal/i2c_target.c.j2``) the same protocol runs in the HAL's listen mode:
``OwnAddress1`` is the address, ``HAL_I2C_EnableListen_IT`` arms it, ``HAL_I2C_AddrCallback`` starts one-byte
``HAL_I2C_Slave_Seq_Receive_IT`` / ``HAL_I2C_Slave_Seq_Transmit_IT`` transfers that the completion callbacks
chain, and ``HAL_I2C_ListenCpltCallback`` (the STOP) counts a completed write and re-arms. The controller's
event and error vectors (``<I2Cn>_EV`` / ``<I2Cn>_ER`` from the SVD interrupt facts) call
``HAL_I2C_EV_IRQHandler`` / ``HAL_I2C_ER_IRQHandler``; the loop resets the controller after a bus error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.bus.i2c_scan import FIRST_DEVICE_ADDRESS, LAST_DEVICE_ADDRESS, _label
from rac_fw.domains.firmware.ops.events import attached
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import relax, replace, violation
from rac_fw.domains.firmware.plan.fields import PeripheralName
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


class I2cTarget(Operation):
    """Answer at 7-bit ``address`` on I2C ``controller`` with a register file of ``registers`` bytes.

    A controller on the bus writes a register index then data, and reads from the selected register on.
    The callbacks run in the controller's interrupt; every completed write (a STOP after written bytes)
    publishes ``done``. The operation's value is the number of completed writes. The address must be one
    the I2C specification leaves to devices and must not be a device the plan talks to on the same bus
    (E_I2C_ADDRESS).
    """

    op: Literal["i2c_target"]
    controller: PeripheralName = Field(description="I2C controller instance answering as target, e.g. I2C1.")
    address: int = Field(ge=FIRST_DEVICE_ADDRESS, le=LAST_DEVICE_ADDRESS, description="7-bit target address.")
    registers: int = Field(default=16, ge=1, le=256, description="Size of the register file (bytes).")


def _check(plan: Plan, target: Target, framework: str, index: int, op: I2cTarget) -> list[Evidence]:
    """E_I2C_ADDRESS: the target address must differ from the devices the plan declares on that bus;
    E_NO_PERIPHERAL: the controller must be an I2C node of the board devicetree."""

    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    found: list[Evidence] = []
    if framework == "zephyr" and _label(target, op.controller) is None:
        from rac_fw.domains.firmware.facts.query import dt_labels

        enabled = sorted(x for x in dt_labels(target) if x.startswith("i2c") and x[3:].isdigit())
        found.append(
            violation(
                "E_NO_PERIPHERAL",
                f"{op.controller} is not an I2C controller of the {target.board.name} devicetree; "
                f"enabled: {', '.join(enabled) or 'none'}",
                [*base, "controller"],
                [op.controller, target.board.name],
                relaxations=[
                    relax(f"answer on {e.upper()}", replace([*base, "controller"], e.upper())) for e in enabled[:3]
                ],
            )
        )
    taken = {
        d.address: d.name
        for d in plan.resources.devices
        if d.bus == "i2c" and d.address is not None and d.controller.upper() == op.controller.upper()
    }
    if op.address in taken:
        free = [a for a in range(FIRST_DEVICE_ADDRESS, LAST_DEVICE_ADDRESS + 1) if a not in taken][:2]
        found.append(
            violation(
                "E_I2C_ADDRESS",
                f"{label} would answer at 0x{op.address:02x} on {op.controller}, the address of device "
                f"{taken[op.address]} on that bus",
                [*base, "address"],
                [label, taken[op.address], f"0x{op.address:02x}"],
                relaxations=[relax(f"answer at 0x{a:02x}", replace([*base, "address"], a)) for a in free],
            )
        )
    if framework == "hal" and not _hal_instance(target, op.controller):
        instances = _hal_instances(target)
        found.append(
            violation(
                "E_NO_PERIPHERAL",
                f"{op.controller} is not an I2C controller of {target.id} with event and error interrupts "
                f"(SVD facts); I2C controllers: {', '.join(instances) or 'none'}",
                [*base, "controller"],
                [op.controller, target.id],
                relaxations=[relax(f"answer on {i}", replace([*base, "controller"], i)) for i in instances[:3]],
            )
        )
    return found


#: NVIC priority of the target's event/error interrupts: the HAL lowering's default for peripheral interrupts.
_HAL_IRQ_PRIORITY = 5


def _hal_instance(target: Target, name: str) -> bool:
    """Whether ``name`` is an I2C peripheral of the SVD facts with its own event and error vectors."""
    found = target.peripherals.get(name.upper())
    vectors = {i.name for i in found.interrupts} if found is not None else set()
    return name.upper().startswith("I2C") and {f"{name.upper()}_EV", f"{name.upper()}_ER"} <= vectors


def _hal_instances(target: Target) -> list[str]:
    """The I2C controllers a target could answer on: event/error vectors, and free pins for SCL and SDA."""
    from rac_fw.domains.firmware.facts.query import free_pins

    usable = [n for n in target.peripherals if _hal_instance(target, n)
              and all(free_pins(target, set(), f"{n}_{s}") for s in ("SCL", "SDA"))]  # fmt: skip
    return sorted(usable, key=lambda n: (len(n), n))


def _hal(b: HalBuild, index: int, op: I2cTarget) -> dict[str, Any]:
    where = f"operations[{index}]"
    view = b.base_view(index, op)
    b.i2c_target(view, op.controller.upper(), op.address, _HAL_IRQ_PRIORITY, where)
    return view


def _zephyr(b: ZephyrBuilder, index: int, op: I2cTarget) -> dict[str, Any]:
    label = _label(b.target, op.controller)
    if label is None:  # refused by the obligation above
        raise b.unsupported(f"operations[{index}].controller", f"{op.controller} is not enabled", [op.controller], [])
    b.app.okay(label)
    b.app.need("i2c", "CONFIG_I2C_TARGET")
    b.app.includes.update({"zephyr/drivers/i2c.h", "zephyr/sys/atomic.h"})
    return {
        "bus": label,
        "address": f"0x{op.address:02x}",
        "registers": op.registers,
        "reactions": attached(b, index),
        "setup": True,
    }


def _available(target: Target) -> bool:
    from rac_fw.domains.firmware.facts.query import has_dt_label

    return target.i2c is not None and target.i2c.zephyr_target and has_dt_label(target, r"i2c\d+")


SPEC = OpSpec(
    model=I2cTarget,
    family="bus",
    flags=frozenset({Flag.ISR_CONTEXT, Flag.VALUE}),
    events=("done",),
    realizations={
        "zephyr": Realization(template="i2c_target", view=_zephyr, available=_available),
        "hal": Realization(template="i2c_target", view=_hal, available=lambda t: t.hal is not None),
    },
    checks=(_check,),
    codes=("E_I2C_ADDRESS", "E_NO_PERIPHERAL"),
)
