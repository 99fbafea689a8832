"""The ``spinlock_state`` operation: a record an ISR updates and a thread reads, under one spinlock."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import Reaction, check_context, check_source, placement
from rac_fw.domains.firmware.ops.kernel import unknown_threads
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: Most bytes copied with interrupts masked: a spinlock section must stay a few word copies long
#: (beyond this, hand the data over by a double buffer or a message queue instead).
MAX_LOCKED_BYTES = 64


class SpinlockState(Reaction):
    """On each ``event`` of ``source``, update a shared record of ``state_bytes`` under a spinlock that
    ``thread`` also takes to read a consistent snapshot every ``period_ms``.

    A spinlock masks interrupts on this core (and spins on others), so the ISR and the thread never
    see half an update; the section is bounded to 64 bytes (E_CRITICAL_SECTION). The reader checks
    every snapshot is whole (torn snapshots are counted); the value is the number of snapshots taken.
    """

    op: Literal["spinlock_state"]
    thread: Name = Field(description="Reading thread (resources.threads).")
    state_bytes: int = Field(default=16, ge=4, le=4096, description="Size of the shared record.")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="How often the thread reads.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: SpinlockState) -> list[Evidence]:

    base: list[str | int] = ["operations", index]
    found = unknown_threads(plan, framework, [(op.thread, [*base, "thread"])])
    if op.state_bytes > MAX_LOCKED_BYTES:
        label = op.name or f"operations[{index}]"
        found.append(
            violation(
                "E_CRITICAL_SECTION",
                f"{label} would copy {op.state_bytes} B with interrupts masked (at most {MAX_LOCKED_BYTES} B); "
                "hand larger data over by a queue or a double buffer",
                [*base, "state_bytes"],
                [label, op.source],
                [measure("locked_copy", op.state_bytes, "bytes"), measure("limit", MAX_LOCKED_BYTES, "bytes")],
                [relax(f"share {MAX_LOCKED_BYTES} B", replace([*base, "state_bytes"], MAX_LOCKED_BYTES))],
            )
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: SpinlockState) -> dict[str, Any]:
    b.app.includes.update({"zephyr/spinlock.h", "zephyr/sys/atomic.h"})
    view: dict[str, Any] = {
        "id": b.ids[index],
        "source": op.source,
        "event": op.event,
        "placement": placement(b.plan, op),
        "words": (op.state_bytes + 3) // 4,
        "period_ms": op.period_ms,
    }
    b.name_view(view, index)
    view["thread_parts"] = [(op.thread, b.thread_part("kernel", "spinlock_state", view))]
    return view


SPEC = OpSpec(
    model=SpinlockState,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={"zephyr": Realization(template="kernel", view=_zephyr)},
    checks=(check_source, check_context, _check),
    codes=("E_CRITICAL_SECTION", "E_REACTION_EVENT", "E_REACTION_CONTEXT", "E_UNKNOWN_RESOURCE"),
)
