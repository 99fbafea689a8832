"""The ``work_item`` operation: a work item (optionally delayable) on the system or a dedicated work queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from rac_fw.domains.firmware.ops.events import attached
from rac_fw.domains.firmware.ops.events.react import acting_on
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class WorkItem(Operation):
    """Run a handler in a work-queue thread: once at start, every ``period_ms``, or when reactions submit it.

    ``delay_ms`` makes it delayable (the handler runs that long after the submission); ``queue``
    dedicated gives it its own work-queue thread (``queue_priority``, ``queue_stack_bytes``) instead of
    the system work queue, so a slow handler never delays other work. The handler publishes ``done``
    (thread context: reactions may block). Its value is the number of completed runs.
    """

    op: Literal["work_item"]
    submit: Literal["once", "periodic", "by_reactions"] = Field(
        default="once", description="once at start, periodic from the main loop, or only by react submit."
    )
    period_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Submission period (periodic).")
    delay_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Delay after submission (delayable).")
    queue: Literal["system", "dedicated"] = "system"
    queue_priority: int = Field(default=5, ge=-16, le=15, description="Dedicated queue thread priority.")
    queue_stack_bytes: int = Field(default=1024, ge=256, le=65_536, description="Dedicated queue thread stack.")

    @model_validator(mode="after")
    def _period(self) -> WorkItem:
        if (self.submit == "periodic") != (self.period_ms is not None):
            raise ValueError("period_ms is given exactly when submit is periodic")
        return self


def submitters(plan: Plan, name: str | None) -> list[int]:
    """Indices of the reactions submitting the work item named ``name``."""
    return acting_on(plan, "submit", name)


def _check(plan: Plan, target: Target, framework: str, index: int, op: WorkItem) -> list[Evidence]:
    """E_WORK_NEVER_SUBMITTED: ``by_reactions`` but no reaction submits it; E_WORK_PERIOD: a delay at
    least as long as the period (a delayable item already scheduled is not rescheduled, so every other
    submission is lost); E_STACK_SIZE: a dedicated queue's stack below the framework's minimum."""
    # Imported here: obligations import the plan model, which walks ops/ when it loads.
    from rac_fw.domains.firmware.obligations.evidence import measure, relax, remove, replace, violation
    from rac_fw.domains.firmware.obligations.frameworks import FRAMEWORKS

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
    rules = FRAMEWORKS.get(framework)
    least = rules.min_thread_stack_bytes if rules else 0
    if op.queue == "dedicated" and op.queue_stack_bytes < least:
        found.append(
            violation(
                "E_STACK_SIZE",
                f"{label}'s work-queue thread has {op.queue_stack_bytes} B of stack; "
                f"{framework} threads need {least} B",
                [*base, "queue_stack_bytes"],
                [label],
                [measure("stack", op.queue_stack_bytes, "B"), measure("minimum", least, "B")],
                [
                    relax(f"give it {least} B", replace([*base, "queue_stack_bytes"], least)),
                    relax("run it on the system work queue", replace([*base, "queue"], "system")),
                ],
            )
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: WorkItem) -> dict[str, Any]:
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "delay": f"K_MSEC({op.delay_ms})" if op.delay_ms is not None else None,
        "dedicated": op.queue == "dedicated",
        "priority": op.queue_priority,
        "stack": op.queue_stack_bytes,
        "reactions": attached(b, index),
        "by_reactions": bool(submitters(b.plan, op.name)),
        "setup": op.queue == "dedicated",
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
    codes=("E_WORK_NEVER_SUBMITTED", "E_WORK_PERIOD", "E_STACK_SIZE"),
)
