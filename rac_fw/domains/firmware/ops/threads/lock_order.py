"""The ``lock_order`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import hal_rtos
from rac_fw.domains.firmware.ops.threads import LOCK_PERIOD_MS, LOCK_TIMEOUT_MS
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class LockOrder(Operation):
    """``threads`` each take ``locks`` in exactly this order (outermost first) and release in reverse.

    Two lock_order operations that name the same locks in different orders can deadlock
    (E_LOCK_ORDER).
    """

    op: Literal["lock_order"]
    locks: list[Name] = Field(min_length=2, max_length=4, description="Locks, outermost first.")
    threads: list[Name] = Field(min_length=1, max_length=8, description="Threads (resources.threads).")


def _zephyr(b: ZephyrBuilder, index: int, op: LockOrder) -> dict[str, Any]:

    locks = [b.c_name(lock) for lock in op.locks]
    for lock in locks:
        b.app.locks.setdefault(lock, True)
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "locks": [{"name": lock, "pi": b.app.locks[lock]} for lock in locks],
        "period_ms": LOCK_PERIOD_MS,
        "timeout_ms": LOCK_TIMEOUT_MS,
    }
    view["thread_parts"] = [(t, b.thread_part("threads", "lock_order", view)) for t in op.threads]
    return view


def _espidf(b: EspIdfBuild, index: int, op: LockOrder) -> dict[str, Any]:
    for lock in op.locks:
        b.locks.setdefault(lock, True)
    return {"tasks": [b.thread(t, f"{t}_{b.symbol(index, op)}") for t in op.threads]}


def _hal(b: HalBuild, index: int, op: LockOrder) -> dict[str, Any]:
    view = b.base_view(index, op)
    where = f"operations[{index}]"
    view.update(
        locks=[b.lock(lock, True) for lock in op.locks],
        wait=b.wait(LOCK_TIMEOUT_MS),
        period=b.ticks(LOCK_PERIOD_MS),
        threads=[b.thread(t, f"{t}_{view['sym']}", where) for t in op.threads],
    )
    return view


SPEC = OpSpec(
    model=LockOrder,
    family="threads",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="threads", view=_zephyr),
        "espidf": Realization(template="threads", view=_espidf),
        "hal": Realization(template="rtos", view=_hal, available=hal_rtos),
    },
)
