"""The ``device_pm`` operation: device runtime power management with balanced get/put per use."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.plan import evidence as ev
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

DEVICE = "E_POWER_DEVICE"
SUSPENDED = "E_POWER_DEVICE_SUSPENDED"

#: Devicetree labels of peripherals whose Zephyr drivers implement device power management.
_PERIPHERAL = re.compile(r"^(i2c|spi|uart|usart|lpuart|adc|pwm|qspi)\d*$")


class DevicePm(Operation):
    """Enable runtime power management on the devicetree node ``device`` and use it ``uses`` times, each
    use bracketed by ``pm_device_runtime_get``/``pm_device_runtime_put`` (balanced, so the device is
    suspended whenever no use holds it).

    Another operation of the plan that uses the device without taking its own reference — the console
    UART every generated app prints on, a bus controller named by ``resources.devices`` — would find it
    suspended: E_POWER_DEVICE_SUSPENDED names the device and its users.
    """

    op: Literal["device_pm"]
    device: Name = Field(description="Devicetree node label of the device (i2c0, spi1, usart2…).")
    uses: int = Field(default=1, ge=1, le=16, description="How many get/put pairs the operation runs.")


def _console(target: Target) -> str | None:
    return target.board.dt_chosen.get("zephyr,console")


def _users(plan: Plan, target: Target, label: str) -> list[str]:
    """Who else uses the device ``label``: the console (every app's ``rac:`` lines) and bus devices."""
    users = ["the console (every rac: line)"] if label == _console(target) else []
    users += [f"resources.devices.{d.name}" for d in plan.resources.devices if d.controller.lower() == label]
    return users


def _candidates(plan: Plan, target: Target) -> list[str]:
    return [
        label for label in target.board.dt_node_labels if _PERIPHERAL.match(label) and not _users(plan, target, label)
    ]



def _check(plan: Plan, target: Target, framework: str, index: int, op: DevicePm) -> list[Evidence]:
    if framework not in SPEC.realizations:
        return []
    where: ev.Path = ["operations", index, "device"]
    options = [ev.relax(f"manage {label} instead", ev.replace(where, label)) for label in _candidates(plan, target)]
    if op.device not in target.board.dt_node_labels or not _PERIPHERAL.match(op.device):
        return [ev.violation(
            DEVICE, f"{op.device} is not a devicetree peripheral node of {target.board.name} with device power "
            "management", where, [op.device, target.id], relaxations=options,
        )]  # fmt: skip
    users = _users(plan, target, op.device)
    if not users:
        return []
    return [ev.violation(
        SUSPENDED,
        f"{op.device} is suspended whenever {op.name or f'operations[{index}]'} does not hold it, but "
        f"{', '.join(users)} use(s) it without a runtime-PM reference",
        where, [op.device, *users], [ev.measure("uses", op.uses, "get/put pairs")], options,
    )]  # fmt: skip


def _zephyr(b: ZephyrBuilder, index: int, op: DevicePm) -> dict[str, Any]:
    b.app.need("power", "CONFIG_PM_DEVICE", "CONFIG_PM_DEVICE_RUNTIME")
    b.app.includes.add("zephyr/pm/device_runtime.h")
    b.app.includes.add("zephyr/device.h")
    return {"id": b.ids[index], "node": f"DT_NODELABEL({op.device})", "uses": op.uses, "setup": True,
            "step": {"period_ms": None}}  # fmt: skip


SPEC = OpSpec(
    model=DevicePm,
    family="power",
    realizations={"zephyr": Realization(template="power", view=_zephyr)},
    checks=(_check,),
    codes=(DEVICE, SUSPENDED),
)
