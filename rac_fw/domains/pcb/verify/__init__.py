"""The independent PCB verifier: a shapely DRC plus one geometric oracle per relation.

It reads only the task's facts (board, footprints, nets), the typed relations and the artifact; it
imports nothing of the realizer and never reads the receipt (``tests/test_pcb.py`` enforces both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from rac_fw.contract import Evidence, Verdict, evidence_from_validation_error
from rac_fw.domains.pcb.artifact import BoardArtifact
from rac_fw.domains.pcb.board import PcbTask
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.verify.dfm import dfm
from rac_fw.domains.pcb.verify.drc import drc
from rac_fw.domains.pcb.verify.geometry import BoardGeometry
from rac_fw.domains.pcb.verify.oracles import RelationCheck, check_relations


@dataclass
class BoardCheck:
    verdicts: list[Verdict]
    evidence: list[Evidence]
    relations: list[RelationCheck] = field(default_factory=list)
    geometry: BoardGeometry | None = None


def check_board(task: PcbTask, action: PcbAction, artifact: dict[str, Any]) -> BoardCheck:
    """Judge an artifact: schema, then DRC, then the oracle of every relation the agent stated and of
    every requirement of the task (so an empty bundle cannot pass by asking for nothing)."""
    try:
        art = BoardArtifact.model_validate(artifact)
    except ValidationError as exc:
        ev = evidence_from_validation_error(exc, prefix="artifact", code="E_ARTIFACT")
        return BoardCheck([Verdict(predicate="artifact_schema", passed=False, detail=ev[0].message)], ev)
    geo, problems = BoardGeometry.build(task, art)
    if problems:
        return BoardCheck([Verdict(predicate="artifact_consistent", passed=False, measured=len(problems), limit=0,
                                   detail=problems[0].message)], problems)
    verdicts, evidence = drc(task, geo)
    if task.route:
        made, found = dfm(task, geo, art)
        verdicts += made
        evidence += found
    rels = check_relations(task, action, geo)
    required = check_relations(task, PcbAction.model_validate({"relations": task.requirements}), geo,
                               label="requirements")
    for rc in [*rels, *required]:
        verdicts.append(rc.verdict)
        if rc.evidence is not None:
            evidence.append(rc.evidence)
    return BoardCheck(verdicts, evidence, rels, geo)
