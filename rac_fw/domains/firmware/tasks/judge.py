"""Judge a firmware source tree: the independent verifier, then a task's checks Φ, compile and console.

One function, :func:`judge_sources`, is what ``rac-fw verify``, the firmware domain's verify step on a
suite task and the source-writing interfaces of ``rac-fw eval`` all call, so a plan's artifact and a
model's hand-written C are held to the same predicates. Compiling (bare-metal trees, Debian's
arm-none-eabi-gcc) and running in QEMU happen only where the tools are present; where they are missing
the outcome is *unknown* (listed in ``Judgement.unknown``), never a silent pass. A run is judged against
the behaviour's console lines and, for a ``trace`` check, against the trace the reference plan's receipt
predicts (:func:`predicted_trace`); cells no runner models (no emulator for the chip) are judged on a
board (``rac-fw hil run``), not here.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rac_fw.contract import Evidence, Verdict
from rac_fw.domain import Verification
from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.tasks import Task
from rac_fw.domains.firmware.tasks.checks import DYNAMIC_KINDS, Sources, judge_static

#: Console forbidden patterns: a fault handler or a fatal error fails the run at once.
FORBID = ("HardFault", "FATAL ERROR")


@dataclass
class Judgement:
    """The verification plus the predicates that could not be decided here (missing tool)."""

    verification: Verification
    unknown: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verification.ok


@dataclass(frozen=True)
class Expected:
    """What a run must show: the behaviour's ordered console lines, and (for a ``trace`` check) the trace the
    reference plan's receipt predicts with the exit status its behaviour ends with."""

    console: tuple[str, ...] = ()
    trace: tuple[dict[str, Any], ...] | None = None
    exit_status: int = 0


_PREDICTED: dict[tuple[str, str], tuple[tuple[dict[str, Any], ...], int] | None] = {}


def predicted_trace(task: Task) -> tuple[tuple[dict[str, Any], ...], int] | None:
    """The console trace the task's reference plan predicts — its lowering receipt's ``trace`` (the behaviour
    layer's items, one console line each or repeat/choice/open) — and the exit status the behaviour ends with;
    None when the receipt predicts none. Memoised per task and reference."""
    from rac_fw.contract import sha256_of

    key = (task.id, sha256_of(task.reference or {}))
    if key not in _PREDICTED:
        _PREDICTED[key] = _predict(task)
    return _PREDICTED[key]


def _predict(task: Task) -> tuple[tuple[dict[str, Any], ...], int] | None:
    from rac_fw.domains.firmware.plan.behaviour.console import predicted
    from rac_fw.domains.firmware.plan.load import parse_plan
    from rac_fw.domains.firmware.tasks import reference_lowering

    if task.reference is None:
        return None
    try:
        trace = reference_lowering(task).receipt.trace
    except LookupError:
        return None
    if not trace:
        return None
    plan = parse_plan(task.reference_plan(), task.id)
    from rac_fw.domains.firmware.facts.load import load_target

    guess = predicted(plan, load_target(task.target), task.framework)
    return tuple(trace), (guess.prediction.exit_code if guess is not None else 0)


def _expectations(task: Task, framework: str, target: str) -> tuple[Expected, list[Evidence]]:
    """What a run must show, and the problem when a ``trace`` check finds no predicted trace to hold it to."""
    if not any(c.kind == "trace" and c.applies(framework, target) for c in task.checks):
        return Expected(task.console), []
    found = predicted_trace(task)
    if found is None:
        return Expected(task.console), [Evidence(
            code="E_TASK_TRACE_UNPREDICTED", objects=[task.id], location=task.id,
            message=f"{task.id} asks for the predicted trace, but its reference plan's receipt predicts none")]
    return Expected(task.console, found[0], found[1]), []


def _static_task_checks(task: Task, files: dict[str, str], framework: str,
                        target: str | None) -> tuple[list[Verdict], list[Evidence]]:
    verdicts, evidence = [], []
    sources = Sources(files, framework)
    for index, check in enumerate(task.checks):
        if not check.applies(framework, target) or check.kind in DYNAMIC_KINDS:
            continue
        found = judge_static(check, files, framework, sources)
        verdicts.append(Verdict(predicate=f"task.{check.kind}[{index}]", passed=not found, measured=len(found),
                                limit=0, unit="violations", detail=check.why or None))
        evidence.extend(found)
    return verdicts, evidence


def _build_and_run(files: dict[str, str], framework: str, target: Target, expected: Expected,
                   judgement: Judgement, timeout_s: float) -> None:
    """Compile a bare-metal tree (and run it in QEMU when the task expects console lines or a trace)."""
    from rac_fw.domains.firmware.backends import get_backend
    from rac_fw.domains.firmware.backends.base import BuildRequest, Capability, RunRequest

    builder = get_backend("gcc")
    if not builder.available():
        judgement.unknown.append("compiled: arm-none-eabi-gcc is not installed")
        return
    with tempfile.TemporaryDirectory(prefix="rac-fw-judge-") as tmp:
        root = Path(tmp) / "src"
        # A tree as lowered lacks the user files its build compiles: write the ones --out would create.
        for rel, text in usercode.with_stand_ins(files).items():
            path = (root / rel).resolve()
            if root.resolve() not in path.parents:
                continue  # a path escaping the tree (``../x``) is not written; the verifier already saw it
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        built = builder.build(BuildRequest(source_dir=root, target=target.id, framework=framework,
                                           build_dir=Path(tmp) / "build", timeout_s=timeout_s))
        judgement.verification.verdicts.append(Verdict(predicate="compiled", passed=built.ok, detail=built.backend))
        if not built.ok:
            judgement.verification.evidence.extend(built.evidence)
            return
        if not expected.console and expected.trace is None:
            return
        runner = get_backend("qemu")
        if not runner.supports(Capability.RUN, framework, target.id):
            return  # no emulator models this chip: the console is judged on a board (rac-fw hil run)
        if not runner.available():
            judgement.unknown.append("console: qemu-system-arm is not installed")
            return
        ran = runner.run(RunRequest(image=built.image, target=target.id, expect=expected.console,
                                    timeout_s=timeout_s, output_dir=Path(tmp) / "run", forbid=FORBID,
                                    exit_status=expected.exit_status))
        judgement.verification.verdicts.extend(ran.verdicts)
        if not ran.ok:
            judgement.verification.evidence.extend(ran.evidence)
        if expected.trace is not None:
            from rac_fw.domains.firmware.plan.behaviour.trace import from_json, match, window

            outcome = match(from_json(list(expected.trace)), window((ran.output or "").splitlines()))
            judgement.verification.verdicts.append(outcome.verdict())
            judgement.verification.evidence.extend(outcome.evidence())


def judge_sources(files: dict[str, str], framework: str, target: Target | None, task: Task | None = None,
                  dynamic: bool = True, timeout_s: float = 60.0) -> Judgement:
    """Verify ``files`` for ``framework`` on ``target``; with ``task``, add its checks Φ.

    ``dynamic`` allows compiling bare-metal trees and running them in QEMU (the console expectations
    are the task's); without a task only the independent verifier runs.
    """
    from rac_fw.domains.firmware.verify.artifact import verify_sources

    base = verify_sources(files, framework, target)
    judgement = Judgement(Verification(list(base.verdicts), list(base.evidence)))
    if task is None:
        return judgement
    verdicts, evidence = _static_task_checks(task, files, framework, target.id if target else None)
    judgement.verification.verdicts.extend(verdicts)
    judgement.verification.evidence.extend(evidence)
    if dynamic and framework == "baremetal" and target is not None and judgement.ok:
        expected, problems = _expectations(task, framework, target.id)
        if problems:
            judgement.verification.verdicts.append(Verdict(predicate="task.trace", passed=False))
            judgement.verification.evidence.extend(problems)
            return judgement
        _build_and_run(files, framework, target, expected, judgement, timeout_s)
    return judgement
