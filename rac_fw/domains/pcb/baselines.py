"""Baseline interfaces on the same tasks, backend and verifier, for comparing against relations.

Each is a domain plugin of its own (``pcb_coord``, ``pcb_coord_py``, ``pcb_candidates``, ``pcb_seq``,
``pcb_req``) with its own action schema, and every one is judged by the same DRC and the task's
requirements (:func:`.verify.check_board`):

- **Coord**: the agent gives part positions, tracks and vias itself (the artifact, in mm).
- **Coord+Py**: the agent gives a Python program; it runs sandboxed with the observation on stdin and
  its last stdout line is a Coord payload.
- **Candidates**: the toolchain proposes placements (the relation-blind solver, three seeds, routed);
  the agent picks one by index.
- **Seq. Relations**: one relation per turn; the agent resends the relations it already stated
  (``history``) and the new one, and the bundle so far is realized.
- **Req.-Only**: the agent only says which of the task's requirements to honour; the toolchain turns
  them into relations itself.

``reference_policy(domain, task)`` is a scripted policy per interface, so a harness can be exercised
without a model.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rac_fw.contract import (
    Action,
    Evidence,
    Observation,
    Realization,
    Receipt,
    evidence_from_validation_error,
    sha256_of,
)
from rac_fw.domain import Validation
from rac_fw.domains.pcb.artifact import BoardArtifact
from rac_fw.domains.pcb.domain import PcbDomain, PcbVerification
from rac_fw.domains.pcb.model import PcbAction, Relation
from rac_fw.domains.pcb.tasks import get_task
from rac_fw.domains.pcb.validate import check_action
from rac_fw.domains.pcb.verify import check_board
from rac_fw.domains.scheduling.sandbox import Limits, run_python

CANDIDATES = 3
NO_RELATIONS = PcbAction(relations=[])
#: Where the relational domain's summary states its action format (a baseline states its own there).
_FORMAT_AT = " Submit {relations: [...]}"


def _restate(obs: Observation, action_format: str) -> Observation:
    """The observation with the relational action format replaced by the baseline's own."""
    board, found, _ = obs.summary.partition(_FORMAT_AT)
    obs.summary = f"{board if found else obs.summary.rstrip()} {action_format}"
    return obs


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CoordPyAction(_Strict):
    program: Annotated[str, Field(min_length=1, max_length=200_000,
                                  description="Python 3 source; reads the observation JSON on stdin and prints "
                                  "a pcb_coord payload as its last stdout line")]


class CandidatesAction(_Strict):
    choice: Annotated[int, Field(ge=0, lt=CANDIDATES, description="index into observation.data.candidates")]


class SeqAction(_Strict):
    history: Annotated[list[Relation], Field(max_length=64)] = []
    relation: Relation


class ReqOnlyAction(_Strict):
    requirements: Annotated[list[int] | None, Field(description="indices of the requirements to honour (all when "
                                                                "omitted)")] = None


def _coord_check(task_name: str, artifact: dict[str, Any]) -> list[Evidence]:
    """A coordinate artifact must place every part, keep placed parts where they are and name real nets."""
    task = get_task(task_name)
    try:
        art = BoardArtifact.model_validate(artifact)
    except ValidationError as exc:
        return evidence_from_validation_error(exc, prefix="payload")
    out = []
    for ref, comp in task.parts.items():
        p = art.placements.get(ref)
        if p is None:
            out.append(Evidence(code="E_UNPLACED", message=f"{ref} has no position", location="payload.placements",
                                objects=[ref]))
        elif comp.fixed is not None and (p.x, p.y, p.rot) != (comp.fixed.x, comp.fixed.y, comp.fixed.rot):
            out.append(Evidence(code="E_FIXED_PART", message=f"{ref} is placed by the task and cannot move",
                                location=f"payload.placements.{ref}", objects=[ref]))
    for ref in sorted(set(art.placements) - set(task.parts)):
        out.append(Evidence(code="E_UNKNOWN_PART", message=f"unknown part {ref!r}",
                            location=f"payload.placements.{ref}", objects=[ref]))
    return out


class PcbCoordDomain(PcbDomain):
    """Coord: positions and copper in millimetres, straight from the agent."""

    name: ClassVar[str] = "pcb_coord"
    action_model: ClassVar[type[BaseModel]] = BoardArtifact  # type: ignore[assignment]
    action_format: ClassVar[str] = (
        "Submit the layout itself in millimetres: {placements: {REF: {x, y, rot}} for every part (placed parts "
        "stay where they are), tracks: [{net, layer, x1, y1, x2, y2, width}] (straight segments), vias: [{net, "
        "x, y, drill, diameter}]}; the DRC and the requirements judge it as given.")

    def observe(self, task: str, detail: str | None = None) -> Observation:
        obs = super().observe(task, detail)
        return obs if detail is not None else _restate(obs, self.action_format)

    def validate(self, task: str, action: Action) -> Validation:
        problems = _coord_check(task, action.payload)
        return Validation(action=None if problems else BoardArtifact.model_validate(action.payload), evidence=problems)

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        data = action.model_dump(mode="json")
        return Realization(artifact=data, artifact_hash=sha256_of(data), seed=seed,
                           receipt=Receipt(realized=["agent coordinates"], notes=["taken as given"]))

    def verify(self, task: str, action: Any, realization: Realization) -> PcbVerification:
        check = check_board(get_task(task), NO_RELATIONS, realization.artifact)
        return PcbVerification(verdicts=check.verdicts, evidence=check.evidence, action=None, seed=realization.seed)


class PcbCoordPyDomain(PcbCoordDomain):
    """Coord+Py: a sandboxed program computes the coordinates."""

    name: ClassVar[str] = "pcb_coord_py"
    action_model: ClassVar[type[BaseModel]] = CoordPyAction
    action_format: ClassVar[str] = (
        "Submit {program: Python 3 source}; it runs sandboxed (10 s, no network) with this observation as JSON "
        "on stdin and must print, as its last stdout line, a layout in millimetres: {placements: {REF: {x, y, "
        "rot}}, tracks: [{net, layer, x1, y1, x2, y2, width}], vias: [{net, x, y, drill, diameter}]}.")
    limits = Limits(wall_s=10.0, cpu_s=10, memory_mb=512)

    def validate(self, task: str, action: Action) -> Validation:
        get_task(task)
        try:
            return Validation(action=CoordPyAction.model_validate(action.payload))
        except ValidationError as exc:
            return Validation(action=None, evidence=evidence_from_validation_error(exc, prefix="payload"))

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        obs = self.observe(task).model_dump(mode="json")
        result = run_python(action.program, json.dumps(obs), self.limits)
        lines = [ln for ln in result.stdout.splitlines() if ln.strip()]
        artifact: dict[str, Any] = {"placements": {}}
        note = f"program {result.outcome} in {result.seconds:.2f} s"
        if result.outcome == "ok" and lines:
            try:
                value = json.loads(lines[-1])
                artifact = value if isinstance(value, dict) else artifact
            except json.JSONDecodeError as exc:
                note += f"; last line is not JSON ({exc.msg})"
        data = {"program": {"outcome": result.outcome, "stderr_tail": result.stderr[-400:]}, "board": artifact}
        return Realization(artifact=data, artifact_hash=sha256_of(data), seed=seed,
                           receipt=Receipt(realized=["program output"], notes=[note]))

    def verify(self, task: str, action: Any, realization: Realization) -> PcbVerification:
        program = realization.artifact.get("program", {})
        if program.get("outcome") != "ok":
            ev = Evidence(code="E_PROGRAM", location="payload.program",
                          message=f"the program did not finish cleanly ({program.get('outcome')}): "
                          f"{program.get('stderr_tail', '')[-200:]}")
            return PcbVerification(verdicts=[], evidence=[ev])
        problems = _coord_check(task, realization.artifact.get("board", {}))
        if problems:
            return PcbVerification(verdicts=[], evidence=problems)
        check = check_board(get_task(task), NO_RELATIONS, realization.artifact["board"])
        return PcbVerification(verdicts=check.verdicts, evidence=check.evidence, seed=realization.seed)


@cache
def candidates(task: str) -> tuple[dict[str, Any], ...]:
    """The toolchain's proposals: the relation-blind solver (placed and routed) with seeds 0..K-1."""
    t = get_task(task)
    from rac_fw.domains.pcb.realize import realize_board  # numba: loaded by use, not by listing domains

    return tuple(realize_board(t, NO_RELATIONS, seed)[0].model_dump(mode="json") for seed in range(CANDIDATES))


class PcbCandidatesDomain(PcbDomain):
    """Candidates: pick one of the toolchain's proposals."""

    name: ClassVar[str] = "pcb_candidates"
    action_model: ClassVar[type[BaseModel]] = CandidatesAction  # type: ignore[assignment]

    def observe(self, task: str, detail: str | None = None) -> Observation:
        obs = super().observe(task, detail)
        if detail is None:
            obs.data["candidates"] = [{"index": i, "placements": c["placements"], "tracks": len(c["tracks"]),
                                       "vias": len(c["vias"])} for i, c in enumerate(candidates(task))]
            _restate(obs, f"Submit {{choice: INDEX}}: pick one of the {CANDIDATES} layouts the toolchain proposes "
                     "(data.candidates: placements, track and via counts); the chosen layout is judged as it is.")
        return obs

    def validate(self, task: str, action: Action) -> Validation:
        get_task(task)
        try:
            return Validation(action=CandidatesAction.model_validate(action.payload))
        except ValidationError as exc:
            return Validation(action=None, evidence=evidence_from_validation_error(exc, prefix="payload"))

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        data = candidates(task)[action.choice]
        return Realization(artifact=data, artifact_hash=sha256_of(data), seed=seed,
                           receipt=Receipt(realized=[f"candidate {action.choice}"]))

    def verify(self, task: str, action: Any, realization: Realization) -> PcbVerification:
        check = check_board(get_task(task), NO_RELATIONS, realization.artifact)
        return PcbVerification(verdicts=check.verdicts, evidence=check.evidence, seed=realization.seed)


class PcbSeqDomain(PcbDomain):
    """Seq. Relations: one new relation per turn on top of the ones already stated."""

    name: ClassVar[str] = "pcb_seq"
    action_model: ClassVar[type[BaseModel]] = SeqAction  # type: ignore[assignment]

    def observe(self, task: str, detail: str | None = None) -> Observation:
        obs = super().observe(task, detail)
        return obs if detail is not None else _restate(obs, (
            "Submit one relation per call: {history: [the relations you stated before, in order], relation: the "
            "new one}; the bundle so far is placed, routed and judged. Distances are classes "
            "(tight/close/loose), never numbers."))

    def validate(self, task: str, action: Action) -> Validation:
        try:
            step = SeqAction.model_validate(action.payload)
        except ValidationError as exc:
            return Validation(action=None, evidence=evidence_from_validation_error(exc, prefix="payload"))
        bundle = {"relations": [r.model_dump(mode="json") for r in [*step.history, step.relation]]}
        typed, evidence = check_action(get_task(task), bundle)
        return Validation(action=typed, evidence=evidence)


class PcbReqOnlyDomain(PcbDomain):
    """Req.-Only: the toolchain decides; the agent only picks which requirements to honour."""

    name: ClassVar[str] = "pcb_req"
    action_model: ClassVar[type[BaseModel]] = ReqOnlyAction  # type: ignore[assignment]

    def observe(self, task: str, detail: str | None = None) -> Observation:
        obs = super().observe(task, detail)
        return obs if detail is not None else _restate(obs, (
            "Submit {requirements: [indices into data.requirements]} (omit it for all): the toolchain states "
            "them as relations, places and routes; you write no relation and no number."))

    def validate(self, task: str, action: Action) -> Validation:
        required = get_task(task).requirements
        try:
            step = ReqOnlyAction.model_validate(action.payload)
        except ValidationError as exc:
            return Validation(action=None, evidence=evidence_from_validation_error(exc, prefix="payload"))
        picked = list(range(len(required))) if step.requirements is None else step.requirements
        bad = [i for i in picked if not 0 <= i < len(required)]
        if bad:
            return Validation(action=None, evidence=[Evidence(
                code="E_UNKNOWN_REQUIREMENT", location="payload.requirements", objects=[str(i) for i in bad],
                message=f"requirement indices {bad} do not exist; this task has {len(required)}")])
        typed, evidence = check_action(get_task(task), {"relations": [required[i] for i in picked]})
        return Validation(action=typed, evidence=evidence)


def reference_policy(domain: str, task: str) -> list[dict[str, Any]]:
    """The payloads a scripted agent submits, in order, on ``task`` through interface ``domain``."""
    t = get_task(task)
    bundle = t.start or t.reference
    if domain == "pcb":
        return [bundle]
    if domain in ("pcb_coord", "pcb_coord_py"):
        from rac_fw.domains.pcb.realize import realize_board

        coords = realize_board(t, PcbAction.model_validate(t.reference), 0)[0].model_dump(mode="json")
        if domain == "pcb_coord":
            return [coords]
        return [{"program": f"print({json.dumps(coords)!r})\n"}]
    if domain == "pcb_candidates":
        return [{"choice": i} for i in range(CANDIDATES)]
    if domain == "pcb_seq":
        rels = bundle["relations"]
        return [{"history": rels[:k], "relation": rels[k]} for k in range(len(rels))]
    if domain == "pcb_req":
        return [{}]
    raise LookupError(f"no scripted policy for {domain!r}")
