"""One firmware plan from file to verdict: validate → lower → verify → [build] → [run].

``rac-fw plan``, the firmware domain and the MCP server all call :func:`run_plan`, so a plan gets the
same verdicts whichever door it comes through. Each step stops the pipeline when it fails, and every
failure is evidence: a malformed or infeasible plan is ``invalid`` (exit 2), an artifact the
independent verifier rejects, a failed build or a failed run is ``fail`` (exit 1).

The verifier never sees the lowering's receipt: it gets the generated files, the framework and the
target facts only. ``PlanResult.to_json()`` is deterministic (no timings, sorted keys), so the same
plan gives the same bytes; timings are kept separately for benchmarks.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rac_fw.contract import Evidence, Feedback, Receipt, Relaxation, Status, Verdict
from rac_fw.domains.firmware.facts.load import UnknownTarget, load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.lower import Lowered, LoweringError, UnknownFramework, lower, lowers, write_artifact
from rac_fw.domains.firmware.ops.uart.uart_print import UartPrint
from rac_fw.domains.firmware.plan.load import PlanError, load_plan, parse_plan
from rac_fw.domains.firmware.plan.model import Plan

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
        if self.lowered is None:
            return None
        return {
            "dir": str(self.out_dir) if self.out_dir is not None else None,
            "artifact_hash": self.lowered.artifact_hash,
            "files": [
                {"path": path, "sha256": digest, "bytes": len(self.lowered.files[path].encode())}
                for path, digest in self.lowered.file_hashes().items()
            ],
        }

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


def _in_file(evidence: list[Evidence], plan: object) -> list[Evidence]:
    """Prefix plan-relative locations with the plan's file, when the plan came from one."""
    if not isinstance(plan, Path | str):
        return evidence
    return [e.model_copy(update={"location": f"{plan}: {e.location}" if e.location else str(plan)}) for e in evidence]


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


def run_plan(
    plan: Plan | dict[str, Any] | Path | str,
    target: str | None = None,
    framework: str | None = None,
    out_dir: Path | str | None = None,
    build: str | None = None,
    run: str | None = None,
    run_timeout_s: float = 30.0,
    bench: Path | None = None,
) -> PlanResult:
    """Run the pipeline for a plan (object, dict or YAML/JSON path).

    ``target`` retargets a plan written for another chip (operations are re-validated and re-lowered
    under the new target's obligations); ``framework`` picks one where a target has several.
    ``out_dir`` writes the artifact (required by ``build``); ``build`` names a builder (``auto``,
    ``west``, ``gcc`` …) and ``run`` a runner (``qemu`` or ``board:ID`` from the ``bench`` file).
    """
    clock = time.perf_counter
    t0 = clock()
    source = str(plan) if isinstance(plan, Path | str) else "<plan>"
    result = PlanResult(status=Status.INVALID, source=source)
    if (build is not None or run is not None) and out_dir is None:
        return _invalid(
            result,
            [
                Evidence(
                    code="E_USAGE", message="--build/--run need --out DIR to write the artifact to", location="--out"
                )
            ],
        )
    try:
        if isinstance(plan, Plan):
            parsed = plan
        elif isinstance(plan, dict):
            parsed = parse_plan(plan)
        else:
            parsed = load_plan(Path(plan))
    except PlanError as exc:
        return _invalid(result, exc.evidence)
    target_id = target or parsed.target
    if target_id is None:
        return _invalid(
            result,
            [
                Evidence(
                    code="E_PLAN_FIELD",
                    message="the plan names no target; give `target:` or --target",
                    location=f"{source}: target",
                )
            ],
        )
    try:
        facts = load_target(target_id)
    except UnknownTarget as exc:
        return _invalid(
            result,
            [
                Evidence(
                    code="E_UNKNOWN_TARGET",
                    message=str(exc),
                    location="--target" if target else f"{source}: target",
                    objects=[target_id],
                    relaxations=[
                        Relaxation(
                            description=f"use target {near}",
                            patch=[{"op": "replace", "path": ["target"], "value": near}],
                        )
                        for near in exc.near
                    ],
                )
            ],
        )
    retargeted = parsed.target is not None and parsed.target != target_id
    if parsed.target != target_id:
        parsed = parsed.model_copy(update={"target": target_id})
    chosen = _resolve_framework(parsed, facts, framework, retargeted)
    result.target, result.framework = target_id, chosen
    if parsed.framework is not None and parsed.framework != chosen:
        parsed = parsed.model_copy(update={"framework": chosen})
    t1 = clock()
    result.timings_ms["load"] = (t1 - t0) * 1e3

    from rac_fw.domains.firmware.obligations import check

    violations = check(parsed, facts, chosen, accepts=lowers)
    t2 = clock()
    result.timings_ms["validate"] = (t2 - t1) * 1e3
    if violations:
        return _invalid(result, _in_file(violations, plan))
    try:
        lowered = lower(parsed, facts, chosen)
    except (LoweringError, UnknownFramework) as exc:
        evidence = getattr(exc, "evidence", None) or [
            Evidence(code="E_TARGET_UNSUPPORTED", message=str(exc), location="framework", objects=[chosen])
        ]
        return _invalid(result, _in_file(evidence, plan))
    result.lowered = lowered
    t3 = clock()
    result.timings_ms["lower"] = (t3 - t2) * 1e3

    from rac_fw.domains.firmware.verify.artifact import verify_sources

    verification = verify_sources(lowered.files, chosen, facts)
    t4 = clock()
    result.timings_ms["verify"] = (t4 - t3) * 1e3
    result.verdicts = list(verification.verdicts)
    result.evidence = list(verification.evidence)
    result.status = Status.PASS if verification.ok else Status.FAIL
    if out_dir is not None:
        try:
            result.manifest = write_artifact(lowered, Path(out_dir))
        except OSError as exc:  # an existing file, no permission, a full disk: the artifact is not written
            return _invalid(result, [Evidence(
                code="E_OUTPUT", message=f"cannot write the artifact to {out_dir}: {exc.strerror or exc}",
                location="--out", objects=[str(out_dir)])])
        result.out_dir = Path(out_dir)
        result.timings_ms["write"] = (clock() - t4) * 1e3
    if result.status is Status.PASS and (build is not None or run is not None):
        _build_and_run(result, facts, parsed, build or "auto", run, run_timeout_s, bench)
    result.timings_ms["total"] = (clock() - t0) * 1e3
    return result


def console_expectations(plan: Plan, facts: Target, framework: str) -> tuple[str, ...]:
    """What the console must show, in order, as regexes derived from the plan (never from the code).

    Bare-metal firmware runs a self-test that reports every operation (``rac: <label> ok``) and ends
    with ``rac: done``; other frameworks are held to the text of each print operation.
    """
    if framework == "baremetal":
        from rac_fw.domains.firmware.verify.console import plan_expectations

        return plan_expectations(plan, facts.board.console.uart if facts.board.console else None)
    return tuple(re.escape(op.message) for op in plan.operations if isinstance(op, UartPrint))


def _build_and_run(
    result: PlanResult,
    facts: Target,
    plan: Plan,
    builder: str,
    runner: str | None,
    timeout_s: float,
    bench: Path | None,
) -> None:
    """Compile the written artifact and optionally run it; both verdicts join the result."""
    from rac_fw.domains.firmware.backends import BackendError, build_artifact, select_runner
    from rac_fw.domains.firmware.backends.base import RunRequest

    assert result.out_dir is not None, "run_plan refuses --build/--run without an output directory"
    backend = None
    if runner is not None:  # a wrong --run is known before anything is compiled
        try:
            backend = select_runner(runner, bench)
        except BackendError as exc:
            result.status = Status.INVALID
            result.evidence.extend(exc.evidence)
            return
    try:
        built = build_artifact(result.out_dir, builder)
    except BackendError as exc:
        result.status = Status.INVALID
        result.evidence.extend(exc.evidence)
        return
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
        return
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
            return
    if backend is None:
        return
    request = RunRequest(
        image=built.image,
        target=facts.id,
        expect=console_expectations(plan, facts, result.framework or ""),
        timeout_s=timeout_s,
        output_dir=result.out_dir,
        forbid=("HardFault", "FATAL ERROR"),
    )
    ran = backend.run(request)
    result.run = {"backend": ran.backend, "ok": ran.ok, "log": str(ran.log) if ran.log else None,
                  "output": ran.output}
    result.verdicts.extend(ran.verdicts)
    if not ran.ok:
        result.status = Status.FAIL
        result.evidence.extend(ran.evidence)
