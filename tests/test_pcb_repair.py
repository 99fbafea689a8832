"""Repair feedback that converges (issue 30): requirements bound the relaxations offered, an unrouted
net names the via_limit/layer_preference restricting it, an edge asked to hold more than it is long is
refused before placement, a pin header at an edge lies along it, and no message reads "∞"."""

from __future__ import annotations

import copy
import json

import pytest

from rac_fw.contract import Action, Realization, Status
from rac_fw.domain import load_domain
from rac_fw.domains.pcb.artifact import BoardArtifact
from rac_fw.domains.pcb.domain import PcbDomain
from rac_fw.domains.pcb.footprints import edge_rotations, row_axis
from rac_fw.domains.pcb.tasks import get_task
from rac_fw.domains.pcb.validate import check_action
from rac_fw.runtime import Episode


@pytest.fixture(scope="module")
def domain() -> PcbDomain:
    dom = load_domain("pcb")
    assert isinstance(dom, PcbDomain)
    return dom


def _realized(domain: PcbDomain, task: str, payload: dict) -> tuple:
    validation = domain.validate(task, Action(domain="pcb", task=task, payload=payload))
    assert validation.ok, validation.evidence
    return validation, domain.realize(task, validation.action, seed=0)


def _forged(real: Realization, art: BoardArtifact) -> Realization:
    data = art.model_dump(mode="json")
    return real.model_copy(update={"artifact": data})


def _relaxations(fb) -> list:
    out = [r for e in fb.evidence for r in e.relaxations]
    return sorted(out, key=lambda r: not r.description.endswith("(re-solved: passes)"))


def test_a_relation_stating_a_requirement_is_neither_loosened_past_it_nor_dropped(domain):
    task = "combo_mcu_00"  # requirements[0]: C1 decouples U1.4, tight
    reference = get_task(task).reference
    validation, real = _realized(domain, task, reference)
    art = BoardArtifact.model_validate(real.artifact)
    c1 = art.placements["C1"]
    art.placements["C1"] = c1.model_copy(update={"x": c1.x + 4.0})  # C1 moved off its pin: relations[0] fails
    verification = domain.verify(task, validation.action, _forged(real, art))
    fb = domain.feedback(task, validation, verification)
    assert fb.status is Status.FAIL
    own = [e for e in fb.evidence if e.location == "payload.relations[0]" and e.code.startswith("E_RELATION_")]
    assert own, [e.message for e in fb.evidence]
    for r in (r for e in fb.evidence for r in e.relaxations):
        touched = [op for op in r.patch if op["path"][:2] == ["relations", 0]]
        assert not touched, r.description  # no tight → close, no drop: the requirement would put it back
    req = next(e for e in fb.evidence if e.code == "E_REQUIREMENT" and e.location == "task.requirements[0]")
    assert not req.relaxations and "states it as relations[0]" in req.message


def test_a_repair_sequence_converges_without_revisiting_a_bundle(domain):
    task = "combo_mcu_00"
    bundle = copy.deepcopy(get_task(task).reference)
    bundle["relations"] += [  # two rivals of the required decouple C1 → U1.4 tight
        {"kind": "decouple", "cap": "C2", "pin": "U1.4", "distance": "tight"},
        {"kind": "place_relative", "a": "C1", "b": "C2", "relation": "left_of", "distance": "tight"}]
    episode = Episode(domain, task, budget=8, seed=0)
    seen: list[str] = []
    statuses = []
    for _ in range(8):
        key = json.dumps(bundle, sort_keys=True)
        assert key not in seen, f"the repair cycled back to turn {seen.index(key)}'s bundle"
        seen.append(key)
        fb = episode.submit(Action(domain="pcb", task=task, payload=bundle))
        statuses.append(fb.status)
        relax = _relaxations(fb)
        if fb.status is Status.PASS or not relax:
            break
        bundle = relax[0].apply(bundle)
        assert check_action(get_task(task), bundle)[0] is not None  # every relaxation applied validates
    assert statuses[0] is Status.FAIL and statuses[-1] is Status.PASS, statuses
    for rel in get_task(task).reference["relations"]:  # the requirements survived the repair untouched
        assert rel in bundle["relations"]


def test_unrouted_net_names_the_via_limit_that_caused_it_and_the_relaxation_validates(domain):
    task = "geiger_muller_counter_route"  # Net-_D4-A needs a via on this two-layer board
    restricted = {"kind": "via_limit", "net": "Net-_D4-A", "max": 0}
    payload = {"relations": [*get_task(task).reference["relations"], restricted]}
    fb = Episode(domain, task, seed=0).submit(Action(domain="pcb", task=task, payload=payload))
    assert fb.status is Status.FAIL
    idx = len(payload["relations"]) - 1
    cause = next(e for e in fb.evidence if e.code == "E_UNROUTED_CAUSE")
    assert cause.objects[0] == "Net-_D4-A" and f"relations[{idx}] via_limit(Net-_D4-A, max 0)" in cause.message
    unrouted = next(e for e in fb.evidence if e.code == "E_UNROUTED" and e.objects[0] == "Net-_D4-A")
    assert "restricted by" in unrouted.message and unrouted.relaxations
    assert all(f"relations[{idx}]" in r.description for r in cause.relaxations)
    for r in cause.relaxations:
        typed, evidence = check_action(get_task(task), r.apply(payload))
        assert typed is not None, evidence
    lifted = cause.relaxations[0].apply(payload)
    real = domain.realize(task, check_action(get_task(task), lifted)[0], 0)
    assert "net Net-_D4-A unrouted" not in " ".join(real.receipt.notes)


def test_an_edge_asked_to_hold_more_than_its_length_is_refused_with_moves_that_validate(domain):
    task = get_task("repair_edge_00")  # two USB-C receptacles at a 16 mm edge
    typed, evidence = check_action(task, task.start)
    assert typed is None
    ev = next(e for e in evidence if e.code == "E_EDGE_INFEASIBLE")
    assert ev.objects == ["relations[0] board_edge(J1)", "relations[1] board_edge(J2)"]
    assert ev.magnitudes[0].value > 0 and "16.0 mm long" in ev.message
    assert ev.relaxations
    for r in ev.relaxations:
        assert check_action(task, r.apply(task.start))[0] is not None, r.description
    # the oracle no longer counts a part pushed past the outline as meeting its edge
    validation, real = _realized(domain, "place_edge_00", get_task("place_edge_00").reference)
    art = BoardArtifact.model_validate(real.artifact)
    rel = next(i for i, r in enumerate(validation.action.relations) if r.kind == "board_edge" and r.ref == "J1")
    side = validation.action.relations[rel].side
    p = art.placements["J1"]
    shift = {"left": (-3.0, 0.0), "right": (3.0, 0.0), "top": (0.0, -3.0), "bottom": (0.0, 3.0)}[side]
    art.placements["J1"] = p.model_copy(update={"x": p.x + shift[0], "y": p.y + shift[1]})
    check = domain.verify("place_edge_00", validation.action, _forged(real, art))
    verdict = next(v for v in check.verdicts if v.predicate == f"relations[{rel}] board_edge")
    assert not verdict.passed and "past the board outline" in verdict.detail


def test_board_edge_on_a_pin_header_means_the_row_lies_along_the_edge(domain):
    task = "place_edge_00"
    t = get_task(task)
    rel_idx, rel = next((i, r) for i, r in enumerate(t.reference["relations"])
                        if r["kind"] == "board_edge" and row_axis(t.parts[r["ref"]].fp) is not None)
    header = t.parts[rel["ref"]].fp
    allowed = edge_rotations(header, rel["side"])
    assert len(allowed) == 2 and all(a % 180 == allowed[0] % 180 for a in allowed)
    validation, real = _realized(domain, task, t.reference)
    art = BoardArtifact.model_validate(real.artifact)
    assert round(art.placements[rel["ref"]].rot) % 360 in allowed  # the placer lays it along the edge
    ok = domain.verify(task, validation.action, real)
    assert next(v for v in ok.verdicts if v.predicate == f"relations[{rel_idx}] board_edge").passed
    p = art.placements[rel["ref"]]
    art.placements[rel["ref"]] = p.model_copy(update={"rot": (p.rot + 90) % 360})  # perpendicular to the edge
    check = domain.verify(task, validation.action, _forged(real, art))
    verdict = next(v for v in check.verdicts if v.predicate == f"relations[{rel_idx}] board_edge")
    assert not verdict.passed and "does not lie along" in verdict.detail and verdict.measured == 90


def test_no_message_reads_infinity_or_only_zero_percent(domain):
    task = "route_diffpair_00"
    validation, real = _realized(domain, task, get_task(task).reference)
    art = BoardArtifact.model_validate(real.artifact)
    art.tracks = [t for t in art.tracks if t.net != "DN"]  # half the pair without copper
    check = domain.verify(task, validation.action, _forged(real, art))
    messages = [e.message for e in check.evidence] + [v.detail or "" for v in check.verdicts]
    pair = [m for m in messages if "diff_pair" in m or "coupled" in m]
    assert pair and any("DN has no tracks" in m for m in pair)
    assert not any("∞" in m or "inf" in m.split() or "only 0%" in m for m in messages), messages
    for v in check.verdicts:
        assert v.measured is None or v.measured == v.measured and abs(v.measured) < 1e9
