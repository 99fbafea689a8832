"""The ``pm_lock`` operation: keep the system out of a power state while a section runs, then release."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.power import PowerState, power
from rac_fw.domains.firmware.ops.crypto.policy import idf_headers
from rac_fw.domains.firmware.plan import evidence as ev
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

STATE = "E_POWER_STATE"

#: How each framework locks a state its power management enters by itself: Zephyr's PM policy
#: (``pm_policy_state_lock_get`` on the state's ``enum pm_state``), ESP-IDF's automatic light sleep
#: (an ``ESP_PM_NO_LIGHT_SLEEP`` lock). States entered only on request (poweroff, deep sleep) need no lock.
LOCKABLE: dict[str, str] = {"zephyr": "pm", "espidf": "light_sleep"}


class PmLock(Operation):
    """Hold a power-management lock on ``state`` for ``hold_ms`` around a section that must not see it
    (a transfer whose peripheral clock stops in that state), then release it: get and put are balanced.

    ``state`` must be one the framework's power management enters by itself on this chip (Zephyr PM
    policy states such as STM32 ``stop``; ESP-IDF automatic ``light_sleep``), else E_POWER_STATE.
    """

    op: Literal["pm_lock"]
    state: Name
    hold_ms: int = Field(default=100, ge=1, le=60_000, description="How long the section holds the lock.")


def _lockable(target: Target, framework: str) -> list[PowerState]:
    facts = power(target)
    mechanism = LOCKABLE.get(framework)
    return [s for s in facts.states if s.enter.get(framework) == mechanism] if facts and mechanism else []



def _check(plan: Plan, target: Target, framework: str, index: int, op: PmLock) -> list[Evidence]:
    realization = SPEC.realization(framework)
    if realization is None or not realization.available(target):
        return []  # the support obligation names the frameworks and targets that realize pm_lock
    states = _lockable(target, framework)
    if any(s.name == op.state for s in states):
        return []
    where: ev.Path = ["operations", index, "state"]
    others = [f for f in target.frameworks if f != framework and f in SPEC.realizations and _lockable(target, f)]
    options = [ev.relax(f"lock {s.name} instead", ev.replace(where, s.name)) for s in states]
    options += [ev.relax(f"use framework {f}", ev.replace(["framework"], f)) for f in others if op.state in
                {s.name for s in _lockable(target, f)}]  # fmt: skip
    if len(plan.operations) > 1:
        options.append(ev.relax("drop the lock", ev.remove(["operations", index])))
    lockable = ", ".join(s.name for s in states) or "none"
    return [ev.violation(
        STATE, f"{op.state} is not a state {framework}'s power management enters by itself on {target.id}, so "
        f"there is nothing to lock (lockable: {lockable})", where, [op.state, target.id, framework],
        [ev.measure("hold", op.hold_ms, "ms")], options,
    )]  # fmt: skip


def _state(target: Target, framework: str, name: str) -> PowerState:
    found = next((s for s in _lockable(target, framework) if s.name == name), None)
    if found is None:
        raise LookupError(f"{name} is not lockable with {framework} (the obligations refuse this plan)")
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: PmLock) -> dict[str, Any]:
    state = _state(b.target, "zephyr", op.state)
    b.app.need("power", "CONFIG_PM")
    b.app.includes.add("zephyr/pm/policy.h")
    enum = "PM_STATE_" + (state.zephyr_state or "suspend-to-idle").upper().replace("-", "_")
    return {"id": b.ids[index], "state": op.state, "enum": enum, "hold_ms": op.hold_ms, "setup": False,
            "step": {"period_ms": None}}  # fmt: skip


def _espidf(b: EspIdfBuild, index: int, op: PmLock) -> dict[str, Any]:
    _state(b.target, "espidf", op.state)
    b.requires.add("esp_pm")
    b.sdkconfig.update({"CONFIG_PM_ENABLE": "y", "CONFIG_FREERTOS_USE_TICKLESS_IDLE": "y"})
    return {"name_c": c_string(op.name or f"pm_lock{index}"), "hold_ms": op.hold_ms,
            "headers": idf_headers(b, "esp_pm.h")}  # fmt: skip


def _locks(framework: str) -> Any:
    return lambda target: bool(_lockable(target, framework))


SPEC = OpSpec(
    model=PmLock,
    family="power",
    realizations={
        "zephyr": Realization(template="power", view=_zephyr, available=_locks("zephyr")),
        "espidf": Realization(template="power", view=_espidf, available=_locks("espidf")),
    },
    checks=(_check,),
    codes=(STATE,),
)
