"""Calibration of the PCB domain, model-free: every task's reference bundle through the turn runtime.

A routing, placement or combined task passes when its reference bundle clean-passes (DRC and every
relation oracle). A repair task passes when its infeasible start bundle *fails* with repair evidence
and the first relaxation marked re-solved, applied to the start bundle, then passes in the same
episode (fail → pass) — or, when validation already refuses the start bundle (an edge asked to hold
more parts than it is long), its first relaxation then passes (invalid → pass).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rac_fw.contract import Action, Realization, Status
from rac_fw.domains.pcb.artifact import BoardArtifact
from rac_fw.domains.pcb.domain import PcbDomain
from rac_fw.domains.pcb.tasks import get_task
from rac_fw.runtime import Episode


class RecordingDomain(PcbDomain):
    """The PCB domain, keeping its last realization so calibration can set a real board's copper
    beside the designer's (the runtime keeps only the artifact's hash)."""

    last: Realization | None = None

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        self.last = super().realize(task, action, seed)
        return self.last


@dataclass(frozen=True)
class CalibrationRow:
    task: str
    category: str
    passed: bool
    realize_s: float
    detail: str
    wirelength_mm: float | None = None  # realized copper (routed tasks), for the comparison with the human layout
    vias: int | None = None


def copper_of(artifact: dict[str, Any]) -> tuple[float, int]:
    """Total track length (mm) and via count of an artifact."""
    art = BoardArtifact.model_validate(artifact)
    return sum(((t.x2 - t.x1) ** 2 + (t.y2 - t.y1) ** 2) ** 0.5 for t in art.tracks), len(art.vias)


def _failure(fb_evidence: list) -> str:
    return "; ".join(e.message for e in fb_evidence[:2]) or "no evidence"


def run_one(domain: PcbDomain, name: str, seed: int = 0) -> CalibrationRow:
    task = get_task(name)
    if task.start is None:
        episode = Episode(domain, name, budget=1, seed=seed)
        fb = episode.submit(Action(domain="pcb", task=name, payload=task.reference))
        realize_ms = episode.turns[0].timings_ms.get("realize", 0.0)
        ok = fb.status is Status.PASS
        copper: tuple[float | None, int | None] = (None, None)
        if task.route and isinstance(domain, RecordingDomain) and domain.last is not None:
            copper = copper_of(domain.last.artifact)
        return CalibrationRow(name, task.category, ok, realize_ms / 1e3,
                              "clean pass" if ok else f"{fb.status.value}: {_failure(fb.evidence)}", *copper)
    episode = Episode(domain, name, budget=2, seed=seed)
    first = episode.submit(Action(domain="pcb", task=name, payload=task.start))
    realize_ms = episode.turns[0].timings_ms.get("realize", 0.0)
    relax = [r for e in first.evidence for r in e.relaxations if r.description.endswith("(re-solved: passes)")]
    if first.status is Status.INVALID:  # refused before placement (an infeasible edge set): relaxations validate
        relax = [r for e in first.evidence if e.code == "E_EDGE_INFEASIBLE" for r in e.relaxations]
    statuses = [first.status.value]
    if first.status in (Status.FAIL, Status.INVALID) and relax:
        second = episode.submit(Action(domain="pcb", task=name, payload=relax[0].apply(task.start)))
        statuses.append(second.status.value)
    ok = statuses in (["fail", "pass"], ["invalid", "pass"])
    detail = " → ".join(statuses) + (f" via “{relax[0].description}”" if relax else " (no re-solved relaxation)")
    return CalibrationRow(name, task.category, ok, realize_ms / 1e3, detail)


def calibrate(domain: PcbDomain, tasks: Iterable[str], seed: int = 0) -> Iterator[CalibrationRow]:
    """One row per task, yielded as soon as it is judged (the CLI prints them live)."""
    for name in tasks:
        yield run_one(domain, name, seed)
