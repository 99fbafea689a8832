"""The firmware domain plugin: tasks are suite tasks (or bare targets), actions are plans.

- task: a suite task ``fw/<family>/<name>@<target>-<framework>`` (:mod:`.tasks`: a requirement, checks
  Φ, a reference plan) or a bare target id (an open task: any plan, judged by the verifier alone). The
  observation is the requirement plus the target's fact summary, with ``detail="pin PA9"`` /
  ``"peripheral USART2"`` / ``"region DTCM"`` for depth;
- action payload: a :class:`~rac_fw.domains.firmware.plan.model.Plan` dict. The action's task is the
  target, so the plan's ``target`` must be absent or equal to it (a plan for another chip is
  retargeted with ``rac-fw plan --target``, not by submitting it to a different task);
- validate: the orchestration's ``parse`` → ``resolve`` → ``check`` stages (:mod:`.pipeline`; all
  violations at once, locations ``payload.…``);
- realize: the ``lower`` stage with the resolved framework; the artifact is
  ``{framework, target, files: {path: sha256}}`` and its hash the sha256 of that document;
- verify: re-hash the produced files against the artifact, then the ``verify`` stage (the independent
  source verifier and, for a suite task, its checks Φ: compile and QEMU console where the tools are present).

A suite task fixes the framework: a plan naming another one is answered with E_FRAMEWORK_MISMATCH.

The module stays cheap to import (the CLI lists its commands on every start, and the plan model is the
largest pydantic model rac-fw builds): each operation imports the stages it runs.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from rac_fw.domain import Command, Domain, Tool, UnknownTask, Validation, Verification, model_ref

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rac_fw.contract import Action, Evidence, Observation, Realization
    from rac_fw.domains.firmware import pipeline
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.mcp.server import Tools

#: How many realized source trees the domain keeps for its verify step (one turn needs one; several
#: sessions may be between realize and verify at once).
_KEPT_ARTIFACTS = 64


def _in_payload(evidence: list[Evidence]) -> list[Evidence]:
    """Locate plan-relative evidence inside the action (``payload.operations[2].baud``)."""
    return [e.model_copy(update={"location": f"payload.{e.location}" if e.location else "payload"}) for e in evidence]


class FirmwareDomain(Domain):
    """Firmware plans for microcontroller targets, checked against each target's facts."""

    name = "firmware"
    action_model = model_ref("rac_fw.domains.firmware.plan.model:Plan")

    def __init__(self) -> None:
        # The realized source trees by artifact hash, for the verify step of the same turn (and the MCP
        # ``plan`` tool's write stage). The domain is shared by concurrent MCP sessions, so the cache is locked.
        self._files: OrderedDict[str, pipeline.Realized] = OrderedDict()
        self._files_lock = threading.Lock()

    def tasks(self) -> list[str]:
        from rac_fw.domains.firmware.facts.load import target_ids
        from rac_fw.domains.firmware.tasks import suite

        return [*suite(), *target_ids()]

    @classmethod
    def commands(cls) -> list[Command]:
        cli = "rac_fw.domains.firmware.cli"
        return [
            Command("plan", f"{cli}.plan:plan",
                    "Validate → lower → verify a firmware plan (and optionally build and run it)."),
            Command("build", f"{cli}.build:build", "Build a generated artifact directory."),
            Command("verify", f"{cli}.verify:verify",
                    "Judge sources with the independent verifier (and a task's checks). Exit 0 clean, 1 fail, "
                    "2 invalid."),
            Command("targets", f"{cli}.targets:targets_app",
                    "Target fact packs: list, show (observation), import (SVD, ST pin data)."),
            Command("hil", f"{cli}.hil:hil_app",
                    "The bench: list boards, flash one, run console expectations on boards."),
            Command("doctor", f"{cli}.doctor:doctor",
                    "Report the toolchains, SDKs, emulators and probes present here, and what each enables."),
            Command("firmware", f"{cli}.calibrate:calibrate_firmware",
                    "Every expressible firmware task's reference plan, model-free: pipeline, then the task's "
                    "checks Φ.", group="calibrate"),
        ]

    def warm(self) -> None:
        from rac_fw.contract import Action
        from rac_fw.domains.firmware import pipeline
        from rac_fw.domains.firmware.facts.load import load_target, target_ids
        from rac_fw.domains.firmware.plan import catalog
        from rac_fw.domains.firmware.verify import artifact  # noqa: F401  (every verifier check)

        catalog.index()
        for target in target_ids():
            load_target(target)
        # One turn of the smallest example fills the template and verifier caches a turn would build.
        from rac_fw.resources import data_dir

        example = data_dir("examples") / "uart_hello.yaml"
        checked = self.validate("stm32f407", Action(domain=self.name, task="stm32f407",
                                                    payload=pipeline.parse(example).model_dump(mode="json",
                                                                                               exclude_none=True)))
        if checked.ok:
            self.verify("stm32f407", checked.action, self.realize("stm32f407", checked.action, 0))

    def tools(self, host: Tools) -> list[Tool]:
        from rac_fw.domains.firmware.mcp_tools import tools

        return tools(host, self)

    def schema_index(self) -> dict[str, Any]:
        from rac_fw.domains.firmware.plan import catalog

        return catalog.index()

    def part_schema(self, part: str) -> dict[str, Any]:
        from rac_fw.domains.firmware.plan import catalog

        return catalog.op_schema(part)

    def tool_schema(self) -> dict[str, Any]:
        from rac_fw.domains.firmware.plan import catalog

        return catalog.envelope_schema()

    def message_models(self) -> dict[str, type[BaseModel]]:
        from rac_fw.domains.firmware.pipeline import PlanReport

        return {"plan-result": PlanReport}

    def _target(self, task: str) -> Target:
        from rac_fw.domains.firmware.facts.load import UnknownTarget, load_target
        from rac_fw.domains.firmware.tasks import get_task

        found = get_task(task)
        try:
            return load_target(found.target if found is not None else task)
        except UnknownTarget:
            raise UnknownTask(self.name, task, self.tasks()) from None

    def observe(self, task: str, detail: str | None = None) -> Observation:
        from rac_fw.contract import Observation
        from rac_fw.domains.firmware.facts import observe as facts_observe
        from rac_fw.domains.firmware.tasks import get_task

        target = self._target(task)
        if detail:
            what, _, name = detail.replace(":", " ").strip().partition(" ")
            try:
                data = facts_observe.detail(target, what, name.strip())
            except facts_observe.UnknownDetailKind as exc:
                raise LookupError(str(exc)) from None
            return Observation(domain=self.name, task=task, summary=f"{what} {name.strip()} of {target.id}", data=data)
        board = target.board
        suite_task = get_task(task)
        summary = "" if suite_task is None else (
            f"Requirement: {suite_task.requirement} Framework: {suite_task.framework}. ")
        summary += (
            f"{target.name} ({target.core.name}) on {board.name}; frameworks {', '.join(target.frameworks)} "
            f"(default {target.frameworks[0]}). Submit a plan (rac-fw schema firmware): named resources "
            "(buffers, pins, devices, threads) and typed operations; never C, addresses or register values. "
            "Ask detail 'pin PA9', 'peripheral USART2', 'region DTCM', 'dma DMA1', 'clock APB1', 'extra uart'."
        )
        data = facts_observe.summary(target)
        if suite_task is not None:
            data = {**data, "task": {"id": suite_task.id, "family": suite_task.family, "status": suite_task.status,
                                     "requirement": suite_task.requirement, "framework": suite_task.framework}}
        return Observation(domain=self.name, task=task, summary=summary, data=data)

    def validate(self, task: str, action: Action) -> Validation:
        from rac_fw.contract import Evidence, Relaxation
        from rac_fw.domains.firmware import pipeline
        from rac_fw.domains.firmware.plan.load import PlanError
        from rac_fw.domains.firmware.tasks import get_task

        target = self._target(task)
        try:
            plan = pipeline.parse(action.payload)
        except PlanError as exc:
            return Validation(None, _in_payload(exc.evidence))
        evidence: list[Evidence] = []
        if plan.target is not None and plan.target != target.id:
            evidence.append(
                Evidence(
                    code="E_TARGET_MISMATCH",
                    message=f"the plan names target {plan.target!r} but was submitted for {target.id!r}",
                    location="target",
                    objects=[plan.target, target.id],
                    relaxations=[
                        Relaxation(
                            description=f"target {target.id}",
                            patch=[{"op": "replace", "path": ["target"], "value": target.id}],
                        )
                    ],
                )
            )
        suite_task = get_task(task)
        if suite_task is not None and plan.framework is not None and plan.framework != suite_task.framework:
            evidence.append(Evidence(
                code="E_FRAMEWORK_MISMATCH", location="framework", objects=[plan.framework, suite_task.framework],
                message=f"task {task} is posed for {suite_task.framework}, the plan names {plan.framework}",
                relaxations=[Relaxation(description=f"framework {suite_task.framework}", patch=[
                    {"op": "replace", "path": ["framework"], "value": suite_task.framework}])]))
        resolved = pipeline.resolve(plan, target.id, suite_task.framework if suite_task is not None else None)
        evidence += pipeline.check(resolved)
        evidence = _in_payload(evidence)
        # The action realize receives names its framework, so realize lowers exactly what was checked.
        bound = resolved.plan.model_copy(update={"framework": resolved.framework})
        return Validation(None if evidence else bound, evidence)

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        from rac_fw.contract import Realization, Receipt, sha256_of
        from rac_fw.domains.firmware import pipeline

        target = self._target(task)
        framework = action.framework or target.frameworks[0]
        try:
            lowered = pipeline.lower(pipeline.Resolved(action, target, framework))
        except pipeline.StageError as exc:  # a lowerer's refusal or an unknown framework
            evidence = _in_payload(exc.evidence)
            artifact: dict[str, Any] = {
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
            self._files[digest] = pipeline.Realized(action, lowered)
            self._files.move_to_end(digest)
            while len(self._files) > _KEPT_ARTIFACTS:
                self._files.popitem(last=False)
        return Realization(artifact=artifact, artifact_hash=digest, receipt=lowered.receipt, seed=seed)

    def realized(self, artifact_hash: str) -> pipeline.Realized | None:
        """The plan and source tree a recent ``realize`` produced (what the MCP ``plan`` tool writes)."""
        with self._files_lock:
            return self._files.get(artifact_hash)

    def verify(self, task: str, action: Any, realization: Realization) -> Verification:
        from rac_fw.contract import Evidence, Verdict, sha256_of
        from rac_fw.domains.firmware import pipeline
        from rac_fw.domains.firmware.tasks import get_task

        artifact = realization.artifact
        if artifact.get("error"):
            evidence = [Evidence.model_validate(e) for e in artifact["error"]]
            return Verification([Verdict(predicate="lowered", passed=False, detail="the lowering refused")], evidence)
        kept = self.realized(realization.artifact_hash)
        files = dict(kept.lowered.files) if kept is not None else {}
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
        from rac_fw.domains.firmware.tasks.judge import judge_sources

        with pipeline.staged("verify"):  # the independent verifier, plus a suite task's checks Φ
            judged = judge_sources(files, str(artifact["framework"]), self._target(task), get_task(task))
        result = judged.verification
        unknown = [Verdict(predicate="undecided", passed=False, detail=why) for why in judged.unknown]
        return Verification([integrity, *result.verdicts, *unknown], list(result.evidence))
