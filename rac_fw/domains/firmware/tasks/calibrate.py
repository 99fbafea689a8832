"""Model-free calibration of the firmware suite: every expressible task's reference plan must pass.

For each task the reference plan goes through the one pipeline (``pipeline.run_plan``: validate →
lower → verify), then the artifact is judged by the task's checks Φ exactly as a model's proposal
would be (compile and QEMU console for bare-metal cells where the tools are present). A task fails
calibration when its reference does not pass, which means either the suite or the toolchain is wrong.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.tasks import Task, expressible
from rac_fw.domains.firmware.tasks.judge import judge_sources


@dataclass(frozen=True)
class CalibrationRow:
    task: str
    passed: bool
    detail: str
    seconds: float


def calibrate_task(task: Task) -> CalibrationRow:
    from rac_fw.domains.firmware.pipeline import run_plan

    started = time.perf_counter()
    result = run_plan(task.reference_plan())
    if result.status is not Status.PASS or result.lowered is None:
        codes = ", ".join(sorted({e.code for e in result.evidence})) or result.status.value
        return CalibrationRow(task.id, False, f"reference plan {result.status.value}: {codes}",
                              time.perf_counter() - started)
    judged = judge_sources(result.lowered.files, task.framework, load_target(task.target), task)
    failed = [v.predicate for v in judged.verification.verdicts if not v.passed]
    ok = judged.ok and not judged.unknown
    if ok:
        detail = f"{len(judged.verification.verdicts)} predicates hold"
    else:
        detail = "; ".join([*(f"{p} failed" for p in failed), *judged.unknown,
                            *(e.message[:120] for e in judged.verification.evidence[:2])])
    return CalibrationRow(task.id, ok, detail, time.perf_counter() - started)


def calibrate(tasks: Iterable[Task] | None = None) -> Iterator[CalibrationRow]:
    """One row per expressible task (in suite order)."""
    for task in tasks if tasks is not None else expressible():
        yield calibrate_task(task)
