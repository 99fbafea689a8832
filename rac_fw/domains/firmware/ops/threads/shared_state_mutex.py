"""The ``shared_state_mutex`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import hal_rtos
from rac_fw.domains.firmware.ops.threads import LOCK_PERIOD_MS, LOCK_TIMEOUT_MS
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


class SharedStateMutex(Operation):
    """``threads`` update a shared state of ``state_bytes`` under one mutex (priority inheritance)."""

    op: Literal["shared_state_mutex"]
    lock: Name = Field(description="Name of the mutex.")
    threads: list[Name] = Field(min_length=2, max_length=8, description="Threads sharing the state.")
    state_bytes: int = Field(default=4, ge=1, le=4096)
    priority_inheritance: bool = Field(
        default=True, description="Use a priority-inheriting mutex (Zephyr k_mutex, FreeRTOS mutex)."
    )


def _zephyr(b: ZephyrBuilder, index: int, op: SharedStateMutex) -> dict[str, Any]:

    lock = b.c_name(op.lock)
    b.app.locks.setdefault(lock, op.priority_inheritance)
    view: dict[str, Any] = {
        "id": b.ids[index],
        "lock": lock,
        "pi": b.app.locks[lock],
        "state_bytes": op.state_bytes,
        "period_ms": LOCK_PERIOD_MS,
        "timeout_ms": LOCK_TIMEOUT_MS,
        "message": c_format(f"{op.name or b.ids[index]}: lock {op.lock} failed ") + ' "(%d)\\n"',
    }
    view["thread_parts"] = [(t, b.thread_part("threads", "shared_state_mutex", view)) for t in op.threads]
    return view


def _espidf(b: EspIdfBuild, index: int, op: SharedStateMutex) -> dict[str, Any]:
    b.locks.setdefault(op.lock, op.priority_inheritance)
    return {"tasks": [b.thread(t, f"{t}_{b.symbol(index, op)}") for t in op.threads]}


def _hal(b: HalBuild, index: int, op: SharedStateMutex) -> dict[str, Any]:
    view = b.base_view(index, op)
    where = f"operations[{index}]"
    view.update(
        lock=b.lock(op.lock, op.priority_inheritance),
        state_bytes=op.state_bytes,
        wait=b.wait(LOCK_TIMEOUT_MS),
        period=b.ticks(LOCK_PERIOD_MS),
        threads=[b.thread(t, f"{t}_{view['sym']}", where) for t in op.threads],
    )
    return view


def _names(plan: Plan, target: Target, framework: str, index: int, op: SharedStateMutex) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: every thread is a declared thread."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    for j, name in enumerate(op.threads):
        refs.thread(name, [*base, "threads", j])
    return refs.found

SPEC = OpSpec(
    model=SharedStateMutex,
    family="threads",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="threads", view=_zephyr),
        "espidf": Realization(template="threads", view=_espidf),
        "hal": Realization(template="rtos", view=_hal, available=hal_rtos, quiet=True),
    },
    checks=(_names,),
    codes=("E_UNKNOWN_RESOURCE",),
)
