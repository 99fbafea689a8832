"""The ``barrier`` operation: N named threads meet every round before any of them goes on.

Zephyr has no barrier object; the kernel's own building blocks give one (include/zephyr/kernel.h:
K_MUTEX_DEFINE, K_CONDVAR_DEFINE, k_condvar_wait with the plan's timeout, k_condvar_broadcast): arrivals
are counted under the mutex, the last arrival starts a new generation and wakes the others, a waiter
that times out withdraws its arrival. FreeRTOS has the rendezvous itself: ``xEventGroupSync`` sets the
caller's bit and waits for every party's (freertos/event_groups.h), one bit per thread.

Obligations of its own: at least two distinct declared threads (E_BARRIER_PARTIES, E_UNKNOWN_RESOURCE).
A plan declares at most 16 threads, so the parties always fit the 24 bits an ESP-IDF event group leaves
the application (``event_flags.EVENT_BITS``), one bit per party.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.kernel import Parties, Timeout, party_threads, timeout_expr
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

PARTIES = "E_BARRIER_PARTIES"


class Barrier(Operation):
    """The ``threads`` each work ``period_ms`` and then wait at a common barrier until all have arrived.

    A wait lasts ``wait_timeout_ms`` (ms, or ``forever``: the plan says which); a thread whose wait times
    out withdraws and counts the timeout. The value is the number of rounds the first thread completed.
    """

    op: Literal["barrier"]
    threads: list[Name] = Field(min_length=1, max_length=16, description="The parties (resources.threads).")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="Work before each meeting (ms).")
    wait_timeout_ms: Timeout


RULE = Parties(
    code=PARTIES,
    twice="it would wait for itself",
    join="let {t} meet {first}",
    declare="declare thread {new} and let it meet {first}",
    alone="{label} has {n} party: a barrier makes two or more threads meet",
    counted="parties",
)


def _check(plan: Plan, target: Target, framework: str, index: int, op: Barrier) -> list[Evidence]:
    return party_threads(plan, framework, index, op.threads, RULE)


def _zephyr(b: ZephyrBuilder, index: int, op: Barrier) -> dict[str, Any]:
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "parties": len(op.threads),
        "names": op.threads,
        "period_ms": op.period_ms,
        "timeout": timeout_expr(op.wait_timeout_ms),
        "forever": op.wait_timeout_ms == "forever",
    }
    b.name_view(view, index)
    view["thread_parts"] = [
        (t, b.thread_part("kernel", "barrier", view | {"first": i == 0})) for i, t in enumerate(op.threads)
    ]
    return view


def _espidf(b: EspIdfBuild, index: int, op: Barrier) -> dict[str, Any]:
    sym = b.symbol(index, op)
    timeout = op.wait_timeout_ms
    return {
        "parties": [b.thread(t, f"{t}_{sym}") | {"bit": i} for i, t in enumerate(op.threads)],
        "all": f"0x{(1 << len(op.threads)) - 1:X}U",
        "period_ms": op.period_ms,
        "ticks": "portMAX_DELAY" if timeout == "forever" else ("0" if timeout == 0 else f"pdMS_TO_TICKS({timeout})"),
        "forever": timeout == "forever",
    }


SPEC = OpSpec(
    model=Barrier,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr),
        "espidf": Realization(template="kernel", view=_espidf),
    },
    checks=(_check,),
    codes=(PARTIES, "E_UNKNOWN_RESOURCE"),
)
