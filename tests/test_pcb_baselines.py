"""The baseline interfaces run their scripted policies through the same runtime, backend and verifier."""

from __future__ import annotations

import copy

from rac_fw.contract import Action, Status
from rac_fw.domain import load_domain
from rac_fw.domains.pcb.baseline_actions import CANDIDATES
from rac_fw.domains.pcb.baselines import reference_policy
from rac_fw.runtime import Episode

TASK = "route_fanout_01"


def _episode(domain: str, task: str = TASK) -> list:
    payloads = reference_policy(domain, task)
    episode = Episode(load_domain(domain), task, budget=len(payloads))
    out = []
    for p in payloads:
        out.append(episode.submit(Action(domain=domain, task=task, payload=p)))
        if episode.done:
            break
    return out


def test_coordinates_from_the_agent_are_judged_by_the_same_verifier():
    [fb] = _episode("pcb_coord")
    assert fb.status is Status.PASS
    assert any(v.predicate.startswith("requirements[") for v in fb.verdicts)
    moved = copy.deepcopy(reference_policy("pcb_coord", TASK)[0])
    moved["placements"]["U1"]["x"] += 1.0
    bad = Episode(load_domain("pcb_coord"), TASK).submit(Action(domain="pcb_coord", task=TASK, payload=moved))
    assert bad.status is Status.INVALID and bad.evidence[0].code == "E_FIXED_PART"


def test_a_sandboxed_program_can_supply_the_coordinates():
    [fb] = _episode("pcb_coord_py")
    assert fb.status is Status.PASS
    crash = Episode(load_domain("pcb_coord_py"), TASK).submit(
        Action(domain="pcb_coord_py", task=TASK, payload={"program": "raise SystemExit(3)"}))
    assert crash.status is Status.FAIL and crash.evidence[0].code == "E_PROGRAM"


def test_candidates_sequential_and_requirements_only():
    picks = _episode("pcb_candidates")
    assert 1 <= len(picks) <= CANDIDATES and all(fb.status in (Status.PASS, Status.FAIL) for fb in picks)
    assert all(any(v.predicate.startswith("requirements[") for v in fb.verdicts) for fb in picks)
    steps = _episode("pcb_seq", "place_group_00")
    assert steps[-1].status is Status.PASS
    [req] = _episode("pcb_req")
    assert req.status is Status.PASS
