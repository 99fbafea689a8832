"""The firmware domain plugin: tasks are targets, actions are plans.

- task: a target id (``rac-fw targets list``); the observation is the target's fact summary, with
  ``detail="pin PA9"`` / ``"peripheral USART2"`` / ``"region DTCM"`` for depth;
- action payload: a :class:`~rac_fw.domains.firmware.plan.model.Plan` dict. The action's task is the
  target, so the plan's ``target`` must be absent or equal to it (a plan for another chip is
  retargeted with ``rac-fw plan --target``, not by submitting it to a different task);
- validate: parse the plan, then every obligation (all violations at once, locations ``payload.…``);
- realize: lower with the plan's framework (or the target's default); the artifact is
  ``{framework, target, files: {path: sha256}}`` and its hash the sha256 of that document;
- verify: re-hash the produced files against the artifact, then the independent source verifier.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

from pydantic import BaseModel

from rac_fw.contract import Action, Evidence, Observation, Realization, Receipt, Relaxation, Verdict, sha256_of
from rac_fw.domain import Domain, UnknownTask, Validation, Verification
from rac_fw.domains.firmware.facts import observe as facts_observe
from rac_fw.domains.firmware.facts.load import UnknownTarget, load_target, target_ids
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations import check, resolve_framework
from rac_fw.domains.firmware.plan import catalog
from rac_fw.domains.firmware.plan.load import PlanError, parse_plan
from rac_fw.domains.firmware.plan.model import Plan

#: How many realized source trees the domain keeps for its verify step (one turn needs one; several
#: sessions may be between realize and verify at once).
_KEPT_ARTIFACTS = 64


def _in_payload(evidence: list[Evidence]) -> list[Evidence]:
    """Locate plan-relative evidence inside the action (``payload.operations[2].baud``)."""
    return [e.model_copy(update={"location": f"payload.{e.location}" if e.location else "payload"}) for e in evidence]


class FirmwareDomain(Domain):
    """Firmware plans for microcontroller targets, checked against each target's facts."""

    name = "firmware"
    action_model = Plan

    def __init__(self) -> None:
        # The realized sources by artifact hash, for the verify step of the same turn. The domain is
        # shared by concurrent MCP sessions, so the cache is locked.
        self._files: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._files_lock = threading.Lock()

    def tasks(self) -> list[str]:
        return target_ids()

    def schema_index(self) -> dict[str, Any]:
        return catalog.index()

    def part_schema(self, part: str) -> dict[str, Any]:
        return catalog.op_schema(part)

    def tool_schema(self) -> dict[str, Any]:
        return catalog.envelope_schema()

    def message_models(self) -> dict[str, type[BaseModel]]:
        from rac_fw.domains.firmware.pipeline import PlanReport

        return {"plan-result": PlanReport}

    def _target(self, task: str) -> Target:
        try:
            return load_target(task)
        except UnknownTarget:
            raise UnknownTask(self.name, task, target_ids()) from None

    def observe(self, task: str, detail: str | None = None) -> Observation:
        target = self._target(task)
        if detail:
            what, _, name = detail.replace(":", " ").strip().partition(" ")
            try:
                data = facts_observe.detail(target, what, name.strip())
            except facts_observe.UnknownDetailKind as exc:
                raise LookupError(str(exc)) from None
            return Observation(domain=self.name, task=task, summary=f"{what} {name.strip()} of {target.id}", data=data)
        board = target.board
        summary = (
            f"{target.name} ({target.core.name}) on {board.name}; frameworks {', '.join(target.frameworks)} "
            f"(default {target.frameworks[0]}). Submit a plan (rac-fw schema firmware): named resources "
            "(buffers, pins, devices, threads) and typed operations; never C, addresses or register values. "
            "Ask detail 'pin PA9', 'peripheral USART2', 'region DTCM', 'dma DMA1', 'clock APB1', 'extra uart'."
        )
        return Observation(domain=self.name, task=task, summary=summary, data=facts_observe.summary(target))

    def validate(self, task: str, action: Action) -> Validation:
        target = self._target(task)
        try:
            plan = parse_plan(action.payload)
        except PlanError as exc:
            return Validation(None, _in_payload(exc.evidence))
        evidence: list[Evidence] = []
        if plan.target is not None and plan.target != task:
            evidence.append(
                Evidence(
                    code="E_TARGET_MISMATCH",
                    message=f"the plan names target {plan.target!r} but was submitted for {task!r}",
                    location="target",
                    objects=[plan.target, task],
                    relaxations=[
                        Relaxation(
                            description=f"target {task}", patch=[{"op": "replace", "path": ["target"], "value": task}]
                        )
                    ],
                )
            )
        from rac_fw.domains.firmware.lower import lowers

        evidence += check(plan, target, plan.framework, accepts=lowers)
        evidence = _in_payload(evidence)
        return Validation(None if evidence else plan, evidence)

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        from rac_fw.domains.firmware.lower import lower

        target = self._target(task)
        framework = resolve_framework(action, target)
        try:
            lowered = lower(action, target, framework)
        except (ValueError, LookupError) as exc:  # a lowerer's refusal (LoweringError) or an unknown framework
            evidence = getattr(exc, "evidence", None) or [
                Evidence(code="E_TARGET_UNSUPPORTED", message=str(exc), location="payload.framework")
            ]
            artifact = {
                "framework": framework,
                "target": task,
                "files": {},
                "error": [e.model_dump() for e in evidence],
            }
            receipt = Receipt(claims_success=False, notes=[e.message for e in evidence])
            return Realization(artifact=artifact, artifact_hash=sha256_of(artifact), receipt=receipt, seed=seed)
        artifact = {"framework": framework, "target": task, "files": lowered.file_hashes()}
        digest = sha256_of(artifact)
        with self._files_lock:
            self._files[digest] = dict(lowered.files)
            self._files.move_to_end(digest)
            while len(self._files) > _KEPT_ARTIFACTS:
                self._files.popitem(last=False)
        return Realization(artifact=artifact, artifact_hash=digest, receipt=lowered.receipt, seed=seed)

    def verify(self, task: str, action: Any, realization: Realization) -> Verification:
        from rac_fw.domains.firmware.verify.artifact import verify_sources

        artifact = realization.artifact
        if artifact.get("error"):
            evidence = [Evidence.model_validate(e) for e in artifact["error"]]
            return Verification([Verdict(predicate="lowered", passed=False, detail="the lowering refused")], evidence)
        with self._files_lock:
            files = self._files.get(realization.artifact_hash, {})
        listed: dict[str, str] = artifact.get("files", {})
        actual = {path: hashlib.sha256(text.encode()).hexdigest() for path, text in files.items()}
        intact = bool(files) and actual == listed and sha256_of(artifact) == realization.artifact_hash
        integrity = Verdict(
            predicate="artifact_integrity",
            passed=intact,
            measured=len(actual),
            limit=len(listed),
            unit="files",
            detail=None if intact else "the files do not match the artifact's hashes",
        )
        if not intact:
            return Verification(
                [integrity],
                [
                    Evidence(
                        code="E_ARTIFACT_INTEGRITY",
                        message=integrity.detail or "",
                        objects=sorted(set(actual) ^ set(listed)),
                    )
                ],
            )
        result = verify_sources(files, str(artifact["framework"]), self._target(task))
        return Verification([integrity, *result.verdicts], list(result.evidence))
