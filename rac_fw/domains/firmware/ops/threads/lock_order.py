"""The ``lock_order`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import hal_rtos
from rac_fw.domains.firmware.ops.threads import LOCK_PERIOD_MS, LOCK_TIMEOUT_MS
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import Path, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


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


def _established(plan: Plan, upto: int) -> tuple[dict[tuple[str, str], str], dict[str, int]]:
    """The lock order the ``lock_order`` operations before ``upto`` establish: (a, b) → who first took a
    before b, and each lock's rank (an operation that inverts the order establishes nothing)."""
    before: dict[tuple[str, str], str] = {}
    rank: dict[str, int] = {}
    for i, op in enumerate(plan.operations[:upto]):
        if not isinstance(op, LockOrder):
            continue
        unique = list(dict.fromkeys(op.locks))
        if any((b, a) in before for x, a in enumerate(unique) for b in unique[x + 1 :]):
            continue
        label = op.name or f"operations[{i}]"
        for x, a in enumerate(unique):
            rank.setdefault(a, len(rank))
            for b in unique[x + 1 :]:
                before.setdefault((a, b), label)
    return before, rank


def _order(plan: Plan, target: Target, framework: str, index: int, op: LockOrder) -> list[Evidence]:
    """E_LOCK_ORDER: all threads take shared locks in one global order (no lock-order inversion).

    Two operations that order the same pair of locks differently can deadlock; the relaxation reorders
    the later operation to the order established first. A lock named twice self-deadlocks.
    """
    found: list[Evidence] = []
    before, rank = _established(plan, index)
    path: Path = ["operations", index, "locks"]
    label = op.name or f"operations[{index}]"
    unique = list(dict.fromkeys(op.locks))
    if len(unique) != len(op.locks):
        found.append(
            violation(
                "E_LOCK_ORDER",
                f"{label} takes a lock twice (self-deadlock on a non-recursive mutex)",
                path,
                unique,
                relaxations=[relax("take each lock once", replace(path, unique))],
            )
        )
    inverted = [(a, b) for x, a in enumerate(unique) for b in unique[x + 1 :] if (b, a) in before]
    if inverted:
        a, b = inverted[0]
        fixed = sorted(unique, key=lambda lock: rank.get(lock, len(rank) + unique.index(lock)))
        found.append(
            violation(
                "E_LOCK_ORDER",
                f"{label} takes {a} before {b}, but {before[(b, a)]} takes {b} before {a}: the two can deadlock",
                path,
                [a, b, label, before[(b, a)]],
                relaxations=[
                    relax(f"take the locks in the established order {' → '.join(fixed)}", replace(path, fixed))
                ],
            )
        )
    return found


def _names(plan: Plan, target: Target, framework: str, index: int, op: LockOrder) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: every thread is a declared thread."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    for j, name in enumerate(op.threads):
        refs.thread(name, [*base, "threads", j])
    return refs.found

SPEC = OpSpec(
    model=LockOrder,
    family="threads",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="threads", view=_zephyr),
        "espidf": Realization(template="threads", view=_espidf),
        "hal": Realization(template="rtos", view=_hal, available=hal_rtos, quiet=True),
    },
    checks=(_order, _names),
    codes=("E_LOCK_ORDER", "E_UNKNOWN_RESOURCE"),
)
