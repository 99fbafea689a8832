"""``PcbDomain``: relational placement and routing on the five-operation contract.

Feedback adds what the default lacks for a board: when relations fail it groups the ones that compete
for the same part or pin (``E_RELATION_CONFLICT``) and proposes relaxations — a looser class, another
edge, dropping a relation — each *re-solved* with the same seed before it is offered, so a relaxation
marked "re-solved: passes" is known to clear the verifier.

The solvers and the DRC (numba kernels, shapely) come with the ``pcb`` extra. The module itself stays
cheap to import (the CLI lists its commands on every start): each operation imports what it uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rac_fw.domain import Command, Domain, Validation, Verification, model_ref

if TYPE_CHECKING:
    from rac_fw.contract import Action, Evidence, Feedback, Observation, Realization, Relaxation
    from rac_fw.domains.pcb.model import PcbAction
    from rac_fw.domains.pcb.verify.oracles import RelationCheck

MAX_TRIALS = 4
CLASS_FIELD = {"board_edge": "distance", "place_relative": "distance", "decouple": "distance", "group": "spread",
               "route_matched": "tolerance", "diff_pair": "tolerance"}


@dataclass
class PcbVerification(Verification):
    """Verification plus what feedback needs to propose and re-solve relaxations."""

    action: PcbAction | None = None
    relations: list[RelationCheck] = field(default_factory=list)
    seed: int = 0


class PcbDomain(Domain):
    """PCB boards: the agent relates named parts, pins and nets; the toolchain places and routes."""

    name: ClassVar[str] = "pcb"
    action_model = model_ref("rac_fw.domains.pcb.model:PcbAction")
    install_extra: ClassVar[str | None] = "pcb"

    @classmethod
    def commands(cls) -> list[Command]:
        return [
            Command("pcb", "rac_fw.domains.pcb.cli:calibrate_pcb",
                    "Every task's reference bundle (repair tasks: fail → relaxation → pass) through the turn "
                    "runtime; on real boards, the realized copper beside the designer's.", group="calibrate"),
            Command("pcb", "rac_fw.domains.pcb.cli:pcb_app",
                    "PCB extras: export to KiCad and SVG, the robustness study."),
        ]

    def warm(self) -> None:
        from rac_fw.domains.pcb import realize, verify  # noqa: F401  (numba kernels, shapely)

    def tasks(self) -> list[str]:
        from rac_fw.domains.pcb.tasks import every_task

        return list(every_task())

    def task_summary(self, task: str) -> str | None:
        from rac_fw.domains.pcb.tasks import get_task

        t = get_task(task)
        movable = sum(c.fixed is None for c in t.components)
        return (f"{t.suite:<6} {t.category:<9} {len(t.components):>4} parts {len(t.nets):>4} nets "
                f"{t.board.layers} layers, {movable} to place")

    def observe(self, task: str, detail: str | None = None) -> Observation:
        from rac_fw.contract import Observation
        from rac_fw.domains.pcb.observe import detail_of, observation_data, summary_of
        from rac_fw.domains.pcb.tasks import get_task

        t = get_task(task)
        if detail is not None:
            return Observation(domain=self.name, task=task, summary=f"{task}: detail of {detail}",
                               data=detail_of(t, detail))
        return Observation(domain=self.name, task=task, summary=summary_of(t), data=observation_data(t))

    def validate(self, task: str, action: Action) -> Validation:
        from rac_fw.domains.pcb.tasks import get_task
        from rac_fw.domains.pcb.validate import check_action

        typed, evidence = check_action(get_task(task), action.payload)
        return Validation(action=typed, evidence=evidence)

    def realize(self, task: str, action: Any, seed: int) -> Realization:
        from rac_fw.domains.pcb.realize import realize  # the numba kernels: loaded by the first turn
        from rac_fw.domains.pcb.tasks import get_task

        return realize(get_task(task), action, seed)

    def verify(self, task: str, action: Any, realization: Realization) -> PcbVerification:
        from rac_fw.domains.pcb.tasks import get_task
        from rac_fw.domains.pcb.verify import check_board  # shapely: loaded by the first turn

        check = check_board(get_task(task), action, realization.artifact)
        return PcbVerification(verdicts=check.verdicts, evidence=check.evidence, action=action,
                               relations=check.relations, seed=realization.seed)

    # --- feedback ----------------------------------------------------------------------------------
    def feedback(self, task: str, validation: Validation, verification: Verification | None) -> Feedback:
        from rac_fw.contract import Relaxation, Status
        from rac_fw.domains.pcb.tasks import get_task

        fb = super().feedback(task, validation, verification)
        if fb.status is Status.FAIL and isinstance(verification, PcbVerification) and verification.action:
            fb.evidence = self._repair(task, verification) + fb.evidence
            required = get_task(task).requirements
            for ev in fb.evidence:
                if ev.code == "E_REQUIREMENT" and ev.location is not None:
                    req = required[int(ev.location.rpartition("[")[2].rstrip("]"))]
                    ev.relaxations.append(Relaxation(description=f"state the requirement as a relation ({req['kind']})",
                                                     patch=[{"op": "add", "path": ["relations", "-"], "value": req}]))
        return fb

    def passes(self, task: str, payload: dict[str, Any], seed: int) -> bool:
        """Re-solve ``payload`` and report whether the verifier accepts the result."""
        from rac_fw.domains.pcb.tasks import get_task
        from rac_fw.domains.pcb.validate import check_action

        typed, evidence = check_action(get_task(task), payload)
        if typed is None:
            return False
        return self.verify(task, typed, self.realize(task, typed, seed)).ok

    def _candidates(self, task: str, v: PcbVerification, idx: int) -> list[Relaxation]:
        from rac_fw.contract import Relaxation
        from rac_fw.domains.pcb import classes

        assert v.action is not None
        rel = v.action.relations[idx]
        out: list[Relaxation] = []
        fld = CLASS_FIELD.get(rel.kind)
        rc = v.relations[idx]
        if fld is not None:
            current = getattr(rel, fld)
            table = classes.TABLES[rel.kind]
            looser = [c for c in classes.CLASSES[classes.CLASSES.index(current) + 1:]
                      if rc.passed or rc.unit != "mm" or table[c] >= rc.measured]
            for cls in looser:
                out.append(Relaxation(description=f"relations[{idx}] {rel.kind}: {fld} {current} → {cls} "
                                      f"({table[cls]} mm)",
                                      patch=[{"op": "replace", "path": ["relations", idx, fld], "value": cls}]))
        if rel.kind == "board_edge":
            for side in ("left", "right", "top", "bottom"):
                if side != rel.side:
                    out.append(Relaxation(description=f"relations[{idx}]: put {rel.ref} at the {side} edge instead",
                                          patch=[{"op": "replace", "path": ["relations", idx, "side"], "value": side}]))
        out.append(Relaxation(description=f"drop relations[{idx}] ({rel.kind})",
                              patch=[{"op": "remove", "path": ["relations", idx]}]))
        return out

    def _repair(self, task: str, v: PcbVerification) -> list[Evidence]:
        """Conflict sets and re-solved relaxations for the failed relations."""
        from rac_fw.contract import Evidence, Magnitude
        from rac_fw.domains.pcb.model import PLACEMENT_KINDS

        assert v.action is not None
        payload = v.action.model_dump(mode="json")
        failed = [rc for rc in v.relations if not rc.passed]
        out: list[Evidence] = []
        seen_conflicts: set[tuple[int, ...]] = set()
        trials = 0
        for rc in failed:
            objs = {o.partition(".")[0] for o in rc.objects}
            rivals = [o for o in v.relations if o.index != rc.index and o.kind in PLACEMENT_KINDS
                      and rc.kind in PLACEMENT_KINDS and objs & {x.partition(".")[0] for x in o.objects}
                      and set(rc.objects) & set(o.objects)]
            group = tuple(sorted([rc.index] + [o.index for o in rivals]))
            candidates = self._candidates(task, v, rc.index)
            for o in rivals:
                candidates[len(candidates) - 1:len(candidates) - 1] = [
                    c for c in self._candidates(task, v, o.index) if not c.description.startswith("drop")][:1]
            tested: list[Relaxation] = []
            untested: list[Relaxation] = []
            for cand in candidates:
                if trials < MAX_TRIALS:
                    trials += 1
                    if self.passes(task, cand.apply(payload), v.seed):
                        tested.append(cand.model_copy(update={"description": cand.description
                                                              + " (re-solved: passes)"}))
                        continue
                untested.append(cand)
            relax = tested + untested
            mags = [Magnitude(name=f"relations[{rc.index}] excess", value=round(rc.measured - rc.limit, 4),
                              unit=rc.unit)] if rc.measured != float("inf") else []
            if len(group) > 1 and group not in seen_conflicts:
                seen_conflicts.add(group)
                names = [f"relations[{i}] {v.relations[i].kind}({', '.join(v.relations[i].objects)})" for i in group]
                out.append(Evidence(
                    code="E_RELATION_CONFLICT", location=f"payload.relations[{rc.index}]", objects=names,
                    message=f"relations {list(group)} compete for {sorted(objs)}: relations[{rc.index}] misses its "
                    f"limit by {rc.measured - rc.limit:.2f} {rc.unit} once the others hold",
                    magnitudes=mags, relaxations=relax))
            else:
                out.append(Evidence(code="E_RELATION_UNMET", location=f"payload.relations[{rc.index}]",
                                    objects=rc.objects, magnitudes=mags, relaxations=relax,
                                    message=f"relations[{rc.index}] {rc.kind} could not be met: "
                                    f"{rc.verdict.detail}"))
        return out

