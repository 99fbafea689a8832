"""Scheduling domain: relations validation, the independent verifier, both backends, the runtime."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from rac_fw.contract import Action, Status
from rac_fw.domain import UnknownTask, load_domain
from rac_fw.domains.scheduling import verify as verify_module
from rac_fw.domains.scheduling.calibrate import QUALITY_THRESHOLD
from rac_fw.domains.scheduling.domain import InvalidTaskFile, SchedulingDomain
from rac_fw.domains.scheduling.instance import LAWRENCE, known_optimum
from rac_fw.domains.scheduling.verify import check_schedule
from rac_fw.runtime import Episode, replay


@pytest.fixture(scope="module")
def domain() -> SchedulingDomain:
    dom = load_domain("scheduling")
    assert isinstance(dom, SchedulingDomain)
    return dom


def act(task: str, **payload: object) -> Action:
    return Action(domain="scheduling", task=task, payload=payload)


def test_entry_point_and_tasks(domain: SchedulingDomain) -> None:
    assert domain.tasks() == [f"la{i:02d}" for i in range(1, 41)]
    with pytest.raises(UnknownTask):
        domain.observe("la99")


def test_observation_names_operations_and_never_the_optimum(domain: SchedulingDomain) -> None:
    for task in LAWRENCE:
        obs = domain.observe(task)
        text = obs.model_dump_json()
        optimum = known_optimum(task)
        assert optimum is not None
        for word in ("optimum", "upper_bound", "lower_bound", "reference", "Lawrence"):
            assert word not in text
        numbers = {op["duration"] for job in obs.data["jobs"] for op in job["operations"]}
        assert optimum not in numbers
    obs = domain.observe("la01")
    first = obs.data["jobs"][0]["operations"][0]
    assert first == {"op": "j0o0", "machine": 1, "duration": 21}
    assert obs.data["num_jobs"] == 10 and obs.data["num_machines"] == 5
    assert domain.observe("la01", "m1").data["machine"] == 1
    assert domain.observe("la01", "j0o1").data["job_predecessor"] == "j0o0"
    with pytest.raises(LookupError):
        domain.observe("la01", "m9")


def test_cyclic_before_is_rejected_with_the_cycle_named(domain: SchedulingDomain) -> None:
    validation = domain.validate("la01", act("la01", priority=list(range(10)),
                                              before=[["j0o1", "j1o0"], ["j2o4", "j4o0"], ["j4o3", "j2o1"]]))
    assert not validation.ok
    [cycle] = validation.evidence
    assert cycle.code == "E_CYCLE"
    assert cycle.location == "payload.before[1]"
    assert "j2o1 → j2o2 → j2o3 → j2o4 → j4o0 → j4o1 → j4o2 → j4o3 → j2o1" in cycle.message
    assert cycle.objects[0] == "j2o1" and "j4o3" in cycle.objects
    assert [r.patch for r in cycle.relaxations] == [[{"op": "remove", "path": ["before", 1]}],
                                                     [{"op": "remove", "path": ["before", 2]}]]
    # a pair against its own job order is a cycle too
    [self_cycle] = domain.validate("la01", act("la01", priority=list(range(10)), before=[["j3o2", "j3o0"]])).evidence
    assert self_cycle.code == "E_CYCLE" and "j3o0 → j3o1 → j3o2 → j3o0" in self_cycle.message


def test_invalid_relations_are_located_never_repaired(domain: SchedulingDomain) -> None:
    ev = domain.validate("la01", act("la01", priority=[0, 1, 1, 3, 4, 5, 6, 7, 8, 10],
                                     before=[["j0o0", "j0o1"], ["j1o0", "j2o0"], ["j9o5", "jx"]])).evidence
    by_location = {e.location: e for e in ev}
    assert by_location["payload.priority[2]"].code == "E_NOT_PERMUTATION"
    assert by_location["payload.priority[2]"].relaxations[0].patch == [
        {"op": "replace", "path": ["priority", 2], "value": 2}]
    assert "job 10 does not exist" in by_location["payload.priority[9]"].message
    assert "missing 2, 9" in by_location["payload.priority"].message
    assert "j9o0..j9o4" in by_location["payload.before[2][0]"].message
    assert by_location["payload.before[2][1]"].code == "E_UNKNOWN_OPERATION"
    too_many = domain.validate("la01", act("la01", priority=list(range(10)), before=[["j0o0", "j1o1"]] * 9))
    assert [e.location for e in too_many.evidence] == ["payload.before"]
    extra = domain.validate("la01", act("la01", priority=list(range(10)), deadline=5))
    assert [e.location for e in extra.evidence] == ["payload.deadline"]
    wrong_type = domain.validate("la01", act("la01", priority=[str(j) for j in range(10)]))
    assert wrong_type.evidence[0].location == "payload.priority[0]"
    # every violation at once: a cycle among the valid pairs is named beside the other errors
    mixed = domain.validate("la01", act("la01", priority=[0, 1, 2, 3, 4, 5, 6, 7, 8, 8],
                                        before=[["j0o9", "j1o0"], ["j0o0", "j0o0"]])).evidence
    codes = {e.location: e.code for e in mixed}
    assert codes["payload.before[0][0]"] == "E_UNKNOWN_OPERATION" and codes["payload.before[1]"] == "E_CYCLE"
    assert "E_NOT_PERMUTATION" in codes.values()


def _realized(domain: SchedulingDomain, task: str, **payload: object):
    validation = domain.validate(task, act(task, **payload))
    assert validation.ok, validation.evidence
    realization = domain.realize(task, validation.action, seed=0)
    return validation.action, realization


def test_forged_schedule_is_rejected_by_the_verifier(domain: SchedulingDomain) -> None:
    relations, realization = _realized(domain, "la01", priority=list(range(10)))
    assert domain.verify("la01", relations, realization).ok
    starts = dict(realization.artifact["starts"])
    moved = next(name for name, t in sorted(starts.items()) if t > 0)
    starts[moved] -= 1  # semi-active schedule: any earlier start breaks a precedence or a machine
    check = check_schedule(domain.instance("la01"), [], starts)
    assert not check.valid and check.makespan is None
    assert any(moved in e.objects for e in check.evidence)
    overlap = [e for e in check.evidence if e.code == "E_MACHINE_OVERLAP"]
    for e in overlap:
        assert e.magnitudes[0].value > 0 and e.location.startswith("machine ")
    # a forged duration is caught when end times are given
    ends = dict(realization.artifact["ends"])
    ends["j0o0"] += 5
    forged = check_schedule(domain.instance("la01"), [], realization.artifact["starts"], ends)
    assert [e.code for e in forged.evidence] == ["E_DURATION"]


def test_verifier_ignores_the_claimed_makespan(domain: SchedulingDomain) -> None:
    relations, realization = _realized(domain, "la02", priority=list(range(10)))
    realization.receipt.notes = ["claimed makespan 1"]
    verification = domain.verify("la02", relations, realization)
    ends = realization.artifact["ends"]
    assert verification.makespan == max(ends.values())


def test_verifier_imports_nothing_from_the_backends() -> None:
    tree = ast.parse(Path(verify_module.__file__).read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if "backends" in m or "ortools" in m or "numba" in m]


@pytest.mark.parametrize("task", ["la01", "la06", "la16", "la26"])
def test_bounded_backend_quality_and_determinism(domain: SchedulingDomain, task: str) -> None:
    n = domain.instance(task).num_jobs
    relations, first = _realized(domain, task, priority=list(range(n)))
    verification = domain.verify(task, relations, first)
    assert verification.ok
    assert verification.makespan <= QUALITY_THRESHOLD * known_optimum(task)
    _, second = _realized(domain, task, priority=list(range(n)))
    assert first.artifact_hash == second.artifact_hash


@pytest.mark.parametrize("backend", ["bounded", "cpsat"])
def test_hard_pairs_hold_in_both_backends(backend: str) -> None:
    dom = SchedulingDomain(time_limit=3.0, workers=1)
    before = [["j9o4", "j0o0"], ["j2o4", "j4o4"]]
    relations, realization = _realized(dom, "la01", priority=list(range(10)), before=before, backend=backend)
    assert realization.artifact["backend"] == backend
    verification = dom.verify("la01", relations, realization)
    assert verification.ok, verification.evidence
    starts, ends = realization.artifact["starts"], realization.artifact["ends"]
    assert starts["j0o0"] >= ends["j9o4"] and starts["j4o4"] >= ends["j2o4"]
    # the verifier checks pairs on its own: the same schedule against the reversed pair fails
    reversed_check = check_schedule(dom.instance("la01"), [("j0o0", "j9o4")], starts)
    assert [e.code for e in reversed_check.evidence] == ["E_HARD_PAIR"]


def test_cpsat_reaches_optimum_on_a_small_instance() -> None:
    dom = SchedulingDomain(default_backend="cpsat", time_limit=5.0, workers=1)
    relations, realization = _realized(dom, "la05", priority=list(range(10)))
    verification = dom.verify("la05", relations, realization)
    assert verification.ok and verification.makespan == known_optimum("la05")
    assert realization.artifact["backend"] == "cpsat"
    assert any(note.startswith("status=") for note in realization.receipt.notes)


def test_task_suffix_selects_backend(domain: SchedulingDomain) -> None:
    relations, realization = _realized(domain, "la01@cpsat", priority=list(range(10)))
    assert realization.artifact["backend"] == "cpsat"
    assert domain.verify("la01@cpsat", relations, realization).ok


def test_instance_files_standard_and_taillard(domain: SchedulingDomain, tmp_path: Path) -> None:
    standard = tmp_path / "tiny.txt"
    standard.write_text("# tiny\n3 3\n0 3 1 2 2 2\n0 2 2 1 1 4\n1 4 2 3 0 1\n")
    taillard = tmp_path / "tiny_ta.txt"
    taillard.write_text("Nb of jobs, Nb of Machines, seeds, bounds\n3 3 1 2 99 7\nTimes\n3 2 2\n2 1 4\n4 3 1\n"
                        "Machines\n1 2 3\n1 3 2\n2 3 1\n")
    a, b = domain.observe(str(standard)), domain.observe(str(taillard))
    assert a.data["jobs"] == b.data["jobs"]
    assert "99" not in json.dumps(b.data)  # Taillard header bounds are ignored
    relations, realization = _realized(domain, str(standard), priority=[2, 1, 0])
    assert domain.verify(str(standard), relations, realization).ok
    broken = tmp_path / "broken.txt"
    broken.write_text("2 2\n0 1 7 2\n1 1 0 1\n")
    with pytest.raises(InvalidTaskFile, match=r"broken.txt:2.*machine 7"):
        domain.observe(str(broken))


def test_runtime_episode_with_trace_and_replay(domain: SchedulingDomain, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    episode = Episode(domain, "la03", budget=3, trace=trace)
    episode.observe()
    bad = episode.submit(act("la03", priority=list(range(10)), before=[["j1o3", "j1o1"]]))
    assert bad.status is Status.INVALID and bad.evidence[0].code == "E_CYCLE"
    assert bad.observation is not None and "jobs" in bad.observation.data
    good = episode.submit(act("la03", priority=list(range(10))[::-1], before=[["j1o1", "j1o3"]]))
    assert good.status is Status.PASS and good.turn == 2
    schedule = good.observation.data["schedule"]
    makespan = next(v.measured for v in good.verdicts if v.predicate == "makespan")
    assert schedule["makespan"] == makespan and len(schedule["starts"]) == 50
    assert episode.done
    count, divergences = replay(trace)
    assert count == 2 and divergences == []
