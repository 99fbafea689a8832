"""The ``trace`` check of a task: a run's console against the trace its reference plan predicts, line for line.

The prediction is recomputed from the task's reference plan (``behaviour.console.predicted``: the boot line,
each operation's set-up line, the behaviour's lines through ``rac: done``), never read from a receipt, so a
producer's artifact is held to what the requirement determines, not to what some lowering wrote down.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence, Verdict

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.console import Predicted
    from rac_fw.domains.firmware.tasks import Task


@cache
def _predicted(task_id: str) -> Predicted | None:
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.plan.behaviour.console import predicted
    from rac_fw.domains.firmware.plan.load import parse_plan
    from rac_fw.domains.firmware.tasks import get_task

    task = get_task(task_id)
    if task is None or task.reference is None:
        return None
    return predicted(parse_plan(task.reference_plan()), load_target(task.target), task.framework)


def reference_trace(task: Task) -> Predicted | None:
    """The console the task's reference plan predicts on its cell (None: it predicts none)."""
    return _predicted(task.id)


def exit_status(task: Task) -> int:
    """The status a correct run ends with: 1 when the reference behaviour exits with a non-zero code."""
    found = reference_trace(task)
    return 1 if found is not None and found.prediction.exit_code != 0 else 0


def judge_trace(task: Task, output: str) -> tuple[list[Verdict], list[Evidence]]:
    """The run's console (``output``) from ``rac: boot`` to ``rac: done`` against the predicted trace."""
    from rac_fw.domains.firmware.plan.behaviour.trace import match, window

    found = reference_trace(task)
    if found is None:
        return [Verdict(predicate="task.trace", passed=False)], [Evidence(
            code="E_TASK_TRACE_UNPREDICTED", objects=[task.id], location=task.id,
            message=f"{task.id} asks for the predicted trace, but its reference plan predicts none")]  # fmt: skip
    outcome = match(found.items, window(output.splitlines()))
    verdict = outcome.verdict()
    return [Verdict(predicate="task.trace", passed=verdict.passed, measured=verdict.measured, unit=verdict.unit,
                    detail=verdict.detail)], outcome.evidence()  # fmt: skip
