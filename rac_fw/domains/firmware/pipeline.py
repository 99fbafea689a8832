"""One firmware orchestration, as named stages: parse → resolve → check → lower → verify → write → build → run.

``rac-fw plan`` (:func:`run_plan`), the firmware domain's five operations and the MCP firmware tools
all call these stage functions, so a plan gets the same verdicts whichever door it comes through and
no door runs a stage twice. Each stage is timed into the active :func:`stage_log` (the MCP ``plan``
answer carries it, so an agent and a test see what ran), and every failure is evidence: a malformed
or infeasible plan is ``invalid`` (exit 2), an artifact the independent verifier rejects, a failed
build or a failed run is ``fail`` (exit 1).

The verifier never sees the lowering's receipt: it gets the generated files, the framework and the
target facts only. ``PlanResult.to_json()`` is deterministic (no timings, sorted keys), so the same
plan gives the same bytes; stage timings are kept separately (``timings_ms``) for benchmarks.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rac_fw.contract import Evidence, Feedback, Receipt, Relaxation, Status, Verdict
from rac_fw.domains.firmware.facts.load import UnknownTarget, load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.lower import (
    ArtifactConflict,
    Lowered,
    LoweringError,
    UnknownFramework,
    lowers,
    write_artifact,
)
from rac_fw.domains.firmware.lower import lower as lower_plan
from rac_fw.domains.firmware.ops.uart.uart_print import UartPrint
from rac_fw.domains.firmware.plan.load import PlanError, load_plan, parse_plan
from rac_fw.domains.firmware.plan.model import Plan

if TYPE_CHECKING:
    from rac_fw.domain import Verification
    from rac_fw.domains.firmware.backends import Backend

#: Version of the JSON document ``rac-fw plan --json`` prints (bump when its shape changes).
PLAN_RESULT_VERSION = "1.0"


class PlanReport(Feedback):
    """What ``rac-fw plan --json`` prints: a feedback message (domain ``firmware``, task = target) plus
    the plan's source, the chosen framework, the written artifact (paths, sha256), the lowering's receipt
    (kept as evidence, never trusted) and the build/run outcomes. ``version`` versions this document."""

    version: str = PLAN_RESULT_VERSION
    plan: str
    target: str | None = None
    framework: str | None = None
    artifact: dict[str, Any] | None = None
    receipt: Receipt | None = None
    build: dict[str, Any] | None = None
    run: dict[str, Any] | None = None


@dataclass
class PlanResult:
    """Everything one pipeline run produced; ``status`` is pass / fail / invalid."""

    status: Status
    source: str
    target: str | None = None
    framework: str | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    lowered: Lowered | None = None
    out_dir: Path | None = None
    manifest: dict[str, Any] | None = None
    build: dict[str, Any] | None = None
    run: dict[str, Any] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {Status.PASS: 0, Status.FAIL: 1}.get(self.status, 2)

    def feedback(self) -> Feedback:
        """The contract's feedback message for this run (domain ``firmware``, task = target)."""
        return Feedback(
            domain="firmware",
            task=self.target or "",
            status=self.status,
            verdicts=self.verdicts,
            evidence=self.evidence,
            artifact_hash=self.lowered.artifact_hash if self.lowered is not None else None,
        )

    def artifact(self) -> dict[str, Any] | None:
        """Paths and sha256 of the generated files (relative to ``out_dir`` when written)."""
        return None if self.lowered is None else artifact_summary(self.lowered, self.out_dir)

    def report(self) -> PlanReport:
        """The typed report: the feedback message plus where the artifact went and what build/run did."""
        feedback = self.feedback()
        return PlanReport(
            **feedback.model_dump(),
            plan=self.source,
            target=self.target,
            framework=self.framework,
            artifact=self.artifact(),
            receipt=self.lowered.receipt if self.lowered is not None else None,
            build=self.build,
            run=self.run,
        )

    def to_json(self) -> dict[str, Any]:
        """The versioned, deterministic document ``rac-fw plan --json`` prints (``rac-fw schema plan-result``)."""
        return self.report().model_dump(mode="json")


#: The orchestration's stages in execution order (a run stops at the first that fails).
STAGES = ("parse", "resolve", "check", "lower", "verify", "write", "build", "run")


@dataclass(frozen=True)
class StageRecord:
    """One stage execution: its name and wall time."""

    stage: str
    ms: float


#: The stage logs open in this context (innermost last); every stage appends to each of them.
_LOGS: contextvars.ContextVar[tuple[list[StageRecord], ...]] = contextvars.ContextVar("rac_fw_stage_logs",
                                                                                        default=())


@contextmanager
def stage_log() -> Iterator[list[StageRecord]]:
    """Collect every stage executed inside the block (nested logs all see the inner stages)."""
    log: list[StageRecord] = []
    token = _LOGS.set((*_LOGS.get(), log))
    try:
        yield log
    finally:
        _LOGS.reset(token)


F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def staged(name: str) -> Iterator[None]:
    """Time the block as one execution of stage ``name`` into every open :func:`stage_log`."""
    assert name in STAGES, name
    start = time.perf_counter()
    try:
        yield
    finally:
        record = StageRecord(name, (time.perf_counter() - start) * 1e3)
        for log in _LOGS.get():
            log.append(record)


def stage(name: str) -> Callable[[F], F]:
    """Mark a function as the orchestration stage ``name``: each call is :func:`staged`."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with staged(name):
                return fn(*args, **kwargs)

        return timed  # type: ignore[return-value]

    return wrap


class StageError(Exception):
    """A stage refused its input; ``evidence`` says why (the run is ``invalid``)."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(e.message for e in evidence))


def _in_file(evidence: list[Evidence], plan: object) -> list[Evidence]:
    """Prefix plan-relative locations with the plan's file, when the plan came from one."""
    if not isinstance(plan, Path | str):
        return evidence
    return [e.model_copy(update={"location": f"{plan}: {e.location}" if e.location else str(plan)}) for e in evidence]


def artifact_summary(lowered: Lowered, out_dir: Path | None) -> dict[str, Any]:
    """Where an artifact went and the sha256 and size of each generated file."""
    return {
        "dir": str(out_dir) if out_dir is not None else None,
        "artifact_hash": lowered.artifact_hash,
        "files": [
            {"path": path, "sha256": digest, "bytes": len(lowered.files[path].encode())}
            for path, digest in lowered.file_hashes().items()
        ],
    }


def _invalid(result: PlanResult, evidence: list[Evidence]) -> PlanResult:
    result.status = Status.INVALID
    result.evidence = evidence
    return result


def _resolve_framework(plan: Plan, target: Target, framework: str | None, retargeted: bool) -> str:
    """--framework, else the plan's (unless retargeted to a chip without it), else the target default."""
    if framework is not None:
        return framework
    if plan.framework is not None and (not retargeted or plan.framework in target.frameworks):
        return plan.framework
    return target.frameworks[0]


@stage("parse")
def parse(plan: Plan | dict[str, Any] | Path | str) -> Plan:
    """The typed plan from an object, a dict or a YAML/JSON file (``PlanError`` with located evidence)."""
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, dict):
        return parse_plan(plan)
    return load_plan(Path(plan))


@dataclass(frozen=True)
class Resolved:
    """A plan bound to its target facts and the framework it is checked and lowered for."""

    plan: Plan
    target: Target
    framework: str


@stage("resolve")
def resolve(plan: Plan, target: str | None = None, framework: str | None = None, source: str = "<plan>",
            zephyr_version: str | None = None) -> Resolved:
    """Bind ``plan`` to a target (``target`` retargets a plan written for another chip), a framework
    (explicit, else the plan's unless retargeted to a chip without it, else the target's default) and the
    Zephyr release the output is written for (``zephyr_version``, default the release ``facts.sdk`` names)."""
    target_id = target or plan.target
    if target_id is None:
        raise StageError([Evidence(code="E_PLAN_FIELD", message="the plan names no target; give `target:` or "
                                   "--target", location=f"{source}: target")])
    try:
        facts = load_target(target_id)
    except UnknownTarget as exc:
        raise StageError([Evidence(
            code="E_UNKNOWN_TARGET", message=str(exc), location="--target" if target else f"{source}: target",
            objects=[target_id],
            relaxations=[Relaxation(description=f"use target {near}",
                                    patch=[{"op": "replace", "path": ["target"], "value": near}])
                         for near in exc.near])]) from None
    facts = _with_release(facts, zephyr_version)
    retargeted = plan.target is not None and plan.target != target_id
    chosen = _resolve_framework(plan, facts, framework, retargeted)
    update: dict[str, Any] = {}
    if plan.target != target_id:
        update["target"] = target_id
    if plan.framework is not None and plan.framework != chosen:
        update["framework"] = chosen
    return Resolved(plan.model_copy(update=update) if update else plan, facts, chosen)


def _with_release(facts: Target, zephyr_version: str | None) -> Target:
    """The target facts for the Zephyr release asked for (an unknown release is invalid input)."""
    from rac_fw.domains.firmware.facts.sdk import UnknownSdkVersion, for_release

    try:
        return for_release(facts, "zephyr", zephyr_version)
    except UnknownSdkVersion as exc:
        raise StageError([Evidence(
            code="E_SDK_VERSION", message=f"{exc}: give --zephyr-version {' or '.join(exc.known)}",
            location="--zephyr-version", objects=[exc.version, *exc.known])]) from None


@dataclass(frozen=True)
class Realized:
    """What the ``lower`` stage produced for a checked plan (framework bound): what ``write`` writes."""

    plan: Plan
    lowered: Lowered


@stage("check")
def check(resolved: Resolved) -> list[Evidence]:
    """Every obligation the plan violates (each with only the relaxations that make it validate and lower)."""
    from rac_fw.domains.firmware.obligations import check as obligations

    return obligations(resolved.plan, resolved.target, resolved.framework, accepts=lowers)


@stage("lower")
def lower(resolved: Resolved) -> Lowered:
    """The generated source tree (a lowerer's refusal is ``StageError`` with its evidence)."""
    try:
        lowered = lower_plan(resolved.plan, resolved.target, resolved.framework)
    except (LoweringError, UnknownFramework) as exc:
        evidence = getattr(exc, "evidence", None) or [
            Evidence(code="E_TARGET_UNSUPPORTED", message=str(exc), location="framework",
                     objects=[resolved.framework])]
        raise StageError(evidence) from None
    return _with_prediction(lowered, resolved)


def _with_prediction(lowered: Lowered, resolved: Resolved) -> Lowered:
    """The receipt states the behaviour's predicted console and its placement decisions (kept as evidence:
    the run judge derives the same trace from the plan again, never from the receipt)."""
    if resolved.plan.behaviour is None:
        return lowered
    from rac_fw.domains.firmware.plan.behaviour.console import predicted, receipt_notes

    guess = predicted(resolved.plan, resolved.target, resolved.framework)
    receipt = lowered.receipt.model_copy(update={
        "trace": guess.to_json() if guess is not None else None,
        "notes": [*lowered.receipt.notes, *receipt_notes(resolved.plan, resolved.target, resolved.framework)],
    })  # fmt: skip
    return dataclasses.replace(lowered, receipt=receipt)


@stage("verify")
def verify(files: dict[str, str], framework: str, target: Target) -> Verification:
    """The independent verifier on the files alone (never the receipt). A suite task's checks Φ join
    it in the firmware domain's verify step (``tasks.judge``), timed as this same stage."""
    from rac_fw.domains.firmware.verify.artifact import verify_sources

    return verify_sources(files, framework, target)


@stage("write")
def write(lowered: Lowered, out_dir: Path, force: bool = False) -> dict[str, Any]:
    """Write the artifact and its manifest; never over a file rac-fw did not write (unless ``force``)."""
    try:
        return write_artifact(lowered, out_dir, force=force)
    except ArtifactConflict as exc:  # the user's files, or edited generated ones: evidence lists them
        raise StageError(exc.evidence) from None
    except OSError as exc:  # an existing file, no permission, a full disk: the artifact is not written
        raise StageError([Evidence(
            code="E_OUTPUT", message=f"cannot write the artifact to {out_dir}: {exc.strerror or exc}",
            location="--out", objects=[str(out_dir)])]) from None


def run_plan(
    plan: Plan | dict[str, Any] | Path | str,
    target: str | None = None,
    framework: str | None = None,
    out_dir: Path | str | None = None,
    build: str | None = None,
    run: str | None = None,
    run_timeout_s: float = 30.0,
    force: bool = False,
    runners: Callable[[str], Backend] | None = None,
    zephyr_version: str | None = None,
) -> PlanResult:
    """Run the stages for a plan (object, dict or YAML/JSON path).

    ``target`` retargets a plan written for another chip (operations are re-validated and re-lowered
    under the new target's obligations); ``framework`` picks one where a target has several.
    ``out_dir`` writes the artifact (required by ``build``); ``build`` names a builder (``auto``,
    ``west``, ``gcc`` …) and ``run`` a runner, resolved by ``runners`` (default: the registered runners
    by name, ``qemu`` …; the bench layer's ``hil.board.runner_for`` adds ``board:ID``). ``force`` lets
    the artifact overwrite files rac-fw did not write or that were edited since. ``zephyr_version`` (``3.7``,
    ``4.1``, ``3.7.1``…) is the Zephyr release a Zephyr artifact is written for (default: ``facts.sdk``'s).
    """
    source = str(plan) if isinstance(plan, Path | str) else "<plan>"
    result = PlanResult(status=Status.INVALID, source=source)
    with stage_log() as log:
        _run_stages(result, plan, target, framework, out_dir, build, run, run_timeout_s, force, runners,
                    zephyr_version)
    for record in log:
        result.timings_ms[record.stage] = result.timings_ms.get(record.stage, 0.0) + record.ms
    result.timings_ms["total"] = sum(r.ms for r in log)
    return result


def _run_stages(result: PlanResult, plan: Plan | dict[str, Any] | Path | str, target: str | None,
                framework: str | None, out_dir: Path | str | None, build: str | None, run: str | None,
                run_timeout_s: float, force: bool, runners: Callable[[str], Backend] | None,
                zephyr_version: str | None = None) -> None:
    if (build is not None or run is not None) and out_dir is None:
        _invalid(result, [Evidence(code="E_USAGE", message="--build/--run need --out DIR to write the artifact to",
                                   location="--out")])
        return
    try:
        parsed = parse(plan)
        resolved = resolve(parsed, target, framework, result.source, zephyr_version)
    except (PlanError, StageError) as exc:
        _invalid(result, exc.evidence)
        return
    result.target, result.framework = resolved.target.id, resolved.framework
    violations = check(resolved)
    if violations:
        _invalid(result, _in_file(violations, plan))
        return
    try:
        lowered = lower(resolved)
    except StageError as exc:
        _invalid(result, _in_file(exc.evidence, plan))
        return
    result.lowered = lowered
    verification = verify(lowered.files, resolved.framework, resolved.target)
    result.verdicts = list(verification.verdicts)
    result.evidence = list(verification.evidence)
    result.status = Status.PASS if verification.ok else Status.FAIL
    if out_dir is not None:
        try:
            result.manifest = write(lowered, Path(out_dir), force)
        except StageError as exc:
            _invalid(result, exc.evidence)
            return
        result.out_dir = Path(out_dir)
    if result.status is Status.PASS and (build is not None or run is not None):
        build_and_run(result, resolved.target, resolved.plan, build or "auto", run, run_timeout_s, runners)


def console_expectations(plan: Plan, facts: Target, framework: str) -> tuple[str, ...]:
    """What the console must show, in order, as regexes derived from the plan (never from the code).

    Bare-metal firmware runs a self-test that reports every operation (``rac: <label> ok``) and ends
    with ``rac: done``; other frameworks are held to the text of each print operation.
    """
    if plan.behaviour is not None:  # the run is judged line for line against the predicted trace (run_stage)
        return (r"^rac: boot\b",)
    if framework == "baremetal":
        from rac_fw.domains.firmware.verify.console import plan_expectations

        return plan_expectations(plan, facts.board.console.uart if facts.board.console else None)
    return tuple(re.escape(op.message) for op in plan.operations if isinstance(op, UartPrint))


def build_and_run(
    result: PlanResult,
    facts: Target,
    plan: Plan,
    builder: str,
    runner: str | None,
    timeout_s: float,
    runners: Callable[[str], Backend] | None = None,
) -> None:
    """The build stage on the written artifact and, with a runner, the run stage; verdicts join ``result``."""
    from rac_fw.domains.firmware.backends import BackendError, select_runner

    assert result.out_dir is not None, "run_plan refuses --build/--run without an output directory"
    backend = None
    if runner is not None:  # a wrong --run is known before anything is compiled
        try:
            backend = (runners or select_runner)(runner)
        except BackendError as exc:
            result.status = Status.INVALID
            result.evidence.extend(exc.evidence)
            return
    if not build_stage(result, facts, builder) or backend is None:
        return
    run_stage(result, facts, plan, backend, timeout_s)


@stage("build")
def build_stage(result: PlanResult, facts: Target, builder: str) -> bool:
    """Compile the written artifact (and, bare metal, check the ELF's placement); True when it built clean."""
    from rac_fw.domains.firmware.backends import BackendError, build_artifact

    assert result.out_dir is not None
    try:
        built = build_artifact(result.out_dir, builder)
    except BackendError as exc:
        result.status = Status.INVALID
        result.evidence.extend(exc.evidence)
        return False
    result.build = {
        "backend": built.backend,
        "ok": built.ok,
        "command": built.command,
        "image": str(built.image) if built.image else None,
        "log": str(built.log) if built.log else None,
    }
    result.verdicts.append(Verdict(predicate="build", passed=built.ok, detail=built.backend))
    if not built.ok:
        result.status = Status.FAIL
        result.evidence.extend(built.evidence)
        return False
    regions = getattr(built, "regions", None)
    if regions:
        result.build["memory"] = [r.as_dict() for r in regions]
    if result.framework == "baremetal" and built.image is not None:
        from rac_fw.domains.firmware.verify.elf import verify_elf

        placed = verify_elf(built.image, facts)
        result.verdicts.extend(placed.verdicts)
        if not placed.ok:
            result.status = Status.FAIL
            result.evidence.extend(placed.evidence)
            return False
    return True


@stage("run")
def run_stage(result: PlanResult, facts: Target, plan: Plan, backend: Backend, timeout_s: float) -> None:
    """Run the built image and judge its console against expectations derived from the plan."""
    from rac_fw.domains.firmware.backends.base import RunRequest

    assert result.out_dir is not None and result.build is not None
    image = result.build["image"]
    request = RunRequest(
        image=Path(image) if image else None,
        target=facts.id,
        expect=console_expectations(plan, facts, result.framework or ""),
        timeout_s=timeout_s,
        output_dir=result.out_dir,
        forbid=("HardFault", "FATAL ERROR"),
        exit_status=_exit_status(plan, facts, result.framework or ""),
    )
    ran = backend.run(request)
    result.run = {"backend": ran.backend, "ok": ran.ok, "log": str(ran.log) if ran.log else None,
                  "output": ran.output}
    result.verdicts.extend(ran.verdicts)
    if not ran.ok:
        result.status = Status.FAIL
        result.evidence.extend(ran.evidence)
    if plan.behaviour is not None:
        from rac_fw.domains.firmware.plan.behaviour.console import judge

        verdicts, evidence = judge(plan, facts, result.framework or "", ran.output or "")
        result.verdicts.extend(verdicts)
        if evidence:
            result.status = Status.FAIL
            result.evidence.extend(evidence)


def _exit_status(plan: Plan, facts: Target, framework: str) -> int:
    """The exit status a run of ``plan`` ends with: 1 when its behaviour is predicted to exit non-zero."""
    if plan.behaviour is None:
        return 0
    from rac_fw.domains.firmware.plan.behaviour.console import predicted

    guess = predicted(plan, facts, framework)
    return 1 if guess is not None and guess.prediction.exit_code != 0 else 0
