"""The ``mutex_lock`` operation: threads take one mutex with the timeout the plan states, or without bound."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import hal_rtos
from rac_fw.domains.firmware.ops.kernel import Timeout, timeout_expr, unknown_threads
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class MutexLock(Operation):
    """``threads`` each take a priority-inheriting mutex every ``period_ms``, hold it ``hold_ms`` while
    they update a shared counter, and release it.

    ``lock_timeout_ms`` is the plan's choice: how long a thread waits for the mutex (ms; 0 = try once)
    or ``forever`` (unbounded). A bounded wait shorter than the hold makes every contended take fail
    (E_LOCK_TIMEOUT). The value is the number of successful critical sections; failed takes are counted.
    """

    op: Literal["mutex_lock"]
    threads: list[Name] = Field(min_length=1, max_length=8, description="Threads sharing the mutex.")
    lock_timeout_ms: Timeout
    hold_ms: int = Field(default=1, ge=0, le=10_000, description="How long a holder keeps the mutex.")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="How often each thread takes it.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: MutexLock) -> list[Evidence]:

    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    found = unknown_threads(plan, framework, [(t, [*base, "threads", j]) for j, t in enumerate(op.threads)])
    timeout = op.lock_timeout_ms
    if len(op.threads) > 1 and timeout != "forever" and timeout < op.hold_ms:
        found.append(
            violation(
                "E_LOCK_TIMEOUT",
                f"{label}'s threads hold the mutex {op.hold_ms} ms but wait only {timeout} ms for it: "
                "every contended take would fail",
                [*base, "lock_timeout_ms"],
                [label, *op.threads],
                [measure("wait", timeout, "ms"), measure("hold", op.hold_ms, "ms")],
                [
                    relax(f"wait up to {2 * op.hold_ms} ms", replace([*base, "lock_timeout_ms"], 2 * op.hold_ms)),
                    relax("wait without bound", replace([*base, "lock_timeout_ms"], "forever")),
                ],
            )
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: MutexLock) -> dict[str, Any]:
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "timeout": timeout_expr(op.lock_timeout_ms),
        "forever": op.lock_timeout_ms == "forever",
        "hold_ms": op.hold_ms,
        "period_ms": op.period_ms,
        "count": len(op.threads),
        "message": c_format(f"{op.name or b.ids[index]}: unlock failed ") + ' "(%d)\\n"',
    }
    view["thread_parts"] = [(t, b.thread_part("kernel", "mutex_lock", view)) for t in op.threads]
    return view


def _espidf(b: EspIdfBuild, index: int, op: MutexLock) -> dict[str, Any]:
    sym = b.symbol(index, op)
    timeout = op.lock_timeout_ms
    return {
        "ticks": "portMAX_DELAY" if timeout == "forever" else f"pdMS_TO_TICKS({timeout})",
        "forever": timeout == "forever",
        "hold_ms": op.hold_ms,
        "period_ms": op.period_ms,
        "tasks": [b.thread(t, f"{t}_{sym}") for t in op.threads],
    }


def _hal(b: HalBuild, index: int, op: MutexLock) -> dict[str, Any]:
    view = b.base_view(index, op)
    where = f"operations[{index}]"
    b.kernel_object("queue")
    view.update(
        wait=b.wait(op.lock_timeout_ms),
        forever=op.lock_timeout_ms == "forever",
        hold=b.ticks(op.hold_ms),
        period=b.ticks(op.period_ms),
        threads=[b.thread(t, f"{t}_{view['sym']}", where) for t in op.threads],
    )
    return view


SPEC = OpSpec(
    model=MutexLock,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr),
        "espidf": Realization(template="kernel", view=_espidf),
        "hal": Realization(template="rtos", view=_hal, available=hal_rtos, quiet=True),
    },
    checks=(_check,),
    codes=("E_LOCK_TIMEOUT", "E_UNKNOWN_RESOURCE"),
)
