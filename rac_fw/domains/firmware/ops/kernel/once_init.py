"""The ``once_init`` operation: N named threads call one initialiser that runs exactly once.

Zephyr has no ``k_once``, and ``pthread_once`` would pull in CONFIG_POSIX_API for one call, so the native
kernel gives it (include/zephyr/sys/atomic.h: atomic_cas, atomic_set, atomic_get, atomic_inc;
include/zephyr/kernel.h: K_SEM_DEFINE, k_sem_take with the plan's timeout, k_sem_give): the thread whose
``atomic_cas`` moves the state from idle to running initialises, then opens a turnstile semaphore that
each waiter takes and gives back, so every later caller passes at once. Each thread that has passed
gives a count; main waits for all N and reports the number of runs, which must be 1.

ESP-IDF (FreeRTOS tasks) uses the same state machine on C11 ``atomic_compare_exchange_strong`` with an
event-group bit the waiters wait on without clearing (freertos/event_groups.h); the last task to pass
reports. The initialiser prepares a shared table (the idiom's usual one-time work).

Obligations of its own: at least two distinct declared threads (E_ONCE_PARTIES, E_UNKNOWN_RESOURCE).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.kernel import Parties, Timeout, party_threads, timeout_expr
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

PARTIES = "E_ONCE_PARTIES"


class OnceInit(Operation):
    """Each of ``threads`` calls a shared initialiser (it fills a ``table_items`` table) before its work.

    The initialiser runs exactly once whoever comes first; the others wait up to ``wait_timeout_ms``
    (ms, or ``forever``: the plan says which) for it to finish. The operation reports once all threads
    have passed, with the number of runs (1).
    """

    op: Literal["once_init"]
    threads: list[Name] = Field(min_length=1, max_length=16, description="The callers (resources.threads).")
    table_items: int = Field(default=16, ge=1, le=1024, description="Entries the initialiser prepares.")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="Each thread's work period after init (ms).")
    wait_timeout_ms: Timeout


RULE = Parties(
    code=PARTIES,
    twice="one thread would count as two callers",
    join="let {t} share it with {first}",
    declare="declare thread {new} and let it share the initialiser",
    alone="{label} has {n} caller: a one-time initialiser is shared by two or more threads",
    counted="callers",
)


def _check(plan: Plan, target: Target, framework: str, index: int, op: OnceInit) -> list[Evidence]:
    return party_threads(plan, framework, index, op.threads, RULE)


def _zephyr(b: ZephyrBuilder, index: int, op: OnceInit) -> dict[str, Any]:
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "parties": len(op.threads),
        "names": op.threads,
        "table": op.table_items,
        "period_ms": op.period_ms,
        "timeout": timeout_expr(op.wait_timeout_ms),
        "step": {"period_ms": None},
    }
    b.name_view(view, index)
    view["thread_parts"] = [(t, b.thread_part("kernel", "once_init", dict(view))) for t in op.threads]
    return view


def _espidf(b: EspIdfBuild, index: int, op: OnceInit) -> dict[str, Any]:
    sym = b.symbol(index, op)
    timeout = op.wait_timeout_ms
    return {
        "parties": [b.thread(t, f"{t}_{sym}") for t in op.threads],
        "count": len(op.threads),
        "table": op.table_items,
        "period_ms": op.period_ms,
        "ticks": "portMAX_DELAY" if timeout == "forever" else ("0" if timeout == 0 else f"pdMS_TO_TICKS({timeout})"),
    }


SPEC = OpSpec(
    model=OnceInit,
    family="kernel",
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr),
        "espidf": Realization(template="kernel", view=_espidf),
    },
    checks=(_check,),
    codes=(PARTIES, "E_UNKNOWN_RESOURCE"),
)
