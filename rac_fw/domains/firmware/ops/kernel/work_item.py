"""The ``work_item`` operation: a work item (optionally delayable) on the system or a dedicated work queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import attached
from rac_fw.domains.firmware.ops.events.react import acting_on
from rac_fw.domains.firmware.ops.kernel import unknown_threads
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.rules import Given, Implies, OneOf, Rule
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class WorkItem(Operation):
    """Run a handler in a work-queue thread: once at start, every ``period_ms``, or when reactions submit it.

    ``delay_ms`` makes it delayable (the handler runs that long after the submission); ``queue_thread``
    names a plan thread that becomes its own work queue (its priority and stack from the thread) instead
    of the system work queue, so a slow handler never delays other work. The handler publishes ``done``
    (thread context: reactions may block). Its value is the number of completed runs.
    """

    op: Literal["work_item"]
    submit: Literal["once", "periodic", "by_reactions"] = Field(
        default="once", description="once at start, periodic from the main loop, or only by react submit."
    )
    period_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Submission period (periodic).")
    delay_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Delay after submission (delayable).")
    queue_thread: Name | None = Field(
        default=None,
        description="Thread (resources.threads) that becomes this item's own work queue; None = the system work queue.",
    )

    rules: ClassVar[tuple[Rule, ...]] = (
        Implies("period_ms is given exactly when submit is periodic", OneOf("submit", ("periodic",)),
                Given("period_ms"), iff=True),
    )  # fmt: skip


def submitters(plan: Plan, name: str | None) -> list[int]:
    """Indices of the reactions submitting the work item named ``name``."""
    return acting_on(plan, "submit", name)


def _check(plan: Plan, target: Target, framework: str, index: int, op: WorkItem) -> list[Evidence]:
    """E_WORK_NEVER_SUBMITTED: ``by_reactions`` but no reaction submits it; E_WORK_PERIOD: a delay at
    least as long as the period (a delayable item already scheduled is not rescheduled, so every other
    submission is lost); E_UNKNOWN_RESOURCE: a queue thread the plan does not declare (its stack is then
    judged like every plan thread's, E_STACK_SIZE)."""

    label = op.name or f"operations[{index}]"
    base: list[str | int] = ["operations", index]
    found = []
    if op.submit == "by_reactions" and not submitters(plan, op.name):
        found.append(
            violation(
                "E_WORK_NEVER_SUBMITTED",
                f"{label} is submitted only by reactions, but no react with action submit names it",
                [*base, "submit"],
                [label],
                relaxations=[relax("submit it once at start", replace([*base, "submit"], "once"))],
            )
        )
    if op.period_ms is not None and op.delay_ms is not None and op.delay_ms >= op.period_ms:
        found.append(
            violation(
                "E_WORK_PERIOD",
                f"{label} is delayed {op.delay_ms} ms but submitted every {op.period_ms} ms: a submission while "
                "it is still scheduled is dropped, so it would not run every period",
                [*base, "delay_ms"],
                [label],
                [measure("delay", op.delay_ms, "ms"), measure("period", op.period_ms, "ms")],
                [
                    relax(f"delay it {op.period_ms // 2} ms", replace([*base, "delay_ms"], op.period_ms // 2))
                    if op.period_ms >= 2
                    else relax("run it without delay", remove([*base, "delay_ms"])),
                    relax("run it without delay", remove([*base, "delay_ms"])),
                ],
            )
        )
    if op.queue_thread is not None:
        found += unknown_threads(plan, framework, [(op.queue_thread, [*base, "queue_thread"])])
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: WorkItem) -> dict[str, Any]:
    thread = b.plan.thread(op.queue_thread) if op.queue_thread is not None else None
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "delay": f"K_MSEC({op.delay_ms})" if op.delay_ms is not None else None,
        "dedicated": thread is not None,
        "priority": thread.priority if thread is not None else None,
        "stack": thread.stack_bytes if thread is not None else None,
        "thread": op.queue_thread,
        "reactions": attached(b, index),
        "by_reactions": bool(submitters(b.plan, op.name)),
        "setup": thread is not None,
    }
    if op.submit != "by_reactions":
        view["step"] = {"period_ms": op.period_ms}
    return view


SPEC = OpSpec(
    model=WorkItem,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    events=("done",),
    realizations={"zephyr": Realization(template="kernel", view=_zephyr)},
    checks=(_check,),
    codes=("E_WORK_NEVER_SUBMITTED", "E_WORK_PERIOD", "E_UNKNOWN_RESOURCE"),
)
