"""The Code baseline (C1T): the agent returns a Python program instead of relations.

The program runs in the :mod:`.sandbox` with the instance as JSON on stdin (the same facts as the
observation, nothing more) and prints one JSON object as its last stdout line, either

* relations — ``{"priority": [...], "before": [[a, b], ...], "backend": ...}`` — which go through the
  same validation and backend as an agent's action, or
* a timetable — ``{"starts": {"j0o0": 0, ...}, "ends": {...}?}`` — judged directly.

Either way the same verifier (:func:`.verify.check_schedule`) decides, so the two interfaces are
compared on equal terms. A program that breaks a sandbox rule or limit gets a ``program`` verdict
that names the rule; it never hangs the caller.
"""

from __future__ import annotations

import json
from typing import Any

from rac_fw.contract import Action, Evidence, Feedback, Status, Verdict, sha256_of
from rac_fw.domain import Validation
from rac_fw.domains.scheduling.domain import ScheduleVerification, SchedulingDomain
from rac_fw.domains.scheduling.sandbox import Limits, SandboxResult, run_python
from rac_fw.domains.scheduling.verify import check_schedule

_OUTCOME_TEXT = {
    "timeout": "ran past the wall-clock limit of {wall_s} s and was killed",
    "cpu": "used more than {cpu_s} s of CPU and was stopped",
    "memory": "ran out of its {memory_mb} MiB memory limit",
    "output": "printed more than {stdout_bytes} bytes and was killed",
    "denied": "was stopped by the sandbox: {denied}",
    "killed": "was killed by a signal",
    "exit": "exited with status {returncode}",
}


def _program_verdict(result: SandboxResult, limits: Limits) -> Verdict:
    detail = "exited cleanly" if result.outcome == "ok" else _OUTCOME_TEXT[result.outcome].format(
        denied=result.denied, returncode=result.returncode, **limits.__dict__)
    return Verdict(predicate="program", passed=result.outcome == "ok", measured=round(result.seconds, 3),
                   limit=limits.wall_s, unit="s", detail=f"{detail}; isolation: {', '.join(result.isolation)}")


def _last_json(stdout: str) -> tuple[dict[str, Any] | None, str | None]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None, "the program printed nothing; its last stdout line must be one JSON object"
    try:
        value = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        return None, f"last stdout line is not JSON ({exc.msg} at column {exc.colno}): {lines[-1][:80]!r}"
    if not isinstance(value, dict):
        return None, f"last stdout line must be a JSON object, got {type(value).__name__}"
    return value, None


def program_input(domain: SchedulingDomain, task: str) -> dict[str, Any]:
    """What the program reads on stdin: the task name and the observation's facts."""
    obs = domain.observe(task)
    return {"task": task, **obs.data}


def run_code(domain: SchedulingDomain, task: str, source: str, limits: Limits | None = None,
             seed: int = 0) -> Feedback:
    """Run one Code-baseline turn and judge it with the domain's verifier."""
    limits = limits or Limits()
    result = run_python(source, json.dumps(program_input(domain, task)), limits)
    program = _program_verdict(result, limits)

    def finish(status: Status, evidence: list[Evidence]) -> Feedback:
        return Feedback(domain=domain.name, task=task, status=status, verdicts=[program], evidence=evidence,
                        observation=domain.observe(task))

    if result.outcome != "ok":
        tail = result.stderr.strip().splitlines()[-3:]
        return finish(Status.FAIL, [Evidence(
            code=f"E_PROGRAM_{result.outcome.upper()}", location="program.py", message=program.detail or "",
            objects=["program.py"] + ([f"stderr: {' | '.join(tail)[:300]}"] if tail else []))])
    output, problem = _last_json(result.stdout)
    if output is None:
        return finish(Status.INVALID, [Evidence(code="E_PROGRAM_OUTPUT", location="stdout",
                                                    message=problem or "")])
    if "starts" in output:
        extra = sorted(set(output) - {"starts", "ends"})
        if extra:
            return finish(Status.INVALID, [Evidence(
                code="E_PROGRAM_OUTPUT", location="stdout",
                message=f"a timetable has only 'starts' and optional 'ends'; unexpected keys {extra}")])
        check = check_schedule(domain.instance(task), [], output["starts"], output.get("ends"))
        verification = ScheduleVerification(verdicts=check.verdicts, evidence=check.evidence, backend="program",
                                            makespan=check.makespan, starts=check.starts if check.valid else None)
        validation = Validation(action=output)
        artifact_hash = sha256_of({"starts": output["starts"], "ends": output.get("ends")})
    else:
        validation = domain.validate(task, Action(domain=domain.name, task=task, payload=output))
        if not validation.ok:
            for ev in validation.evidence:
                ev.location = f"stdout: {ev.location}"
            return finish(Status.INVALID, validation.evidence)
        realization = domain.realize(task, validation.action, seed)
        verification = domain.verify(task, validation.action, realization)
        artifact_hash = realization.artifact_hash
    fb = domain.feedback(task, validation, verification)
    fb.verdicts.insert(0, program)
    fb.artifact_hash = artifact_hash
    return fb
