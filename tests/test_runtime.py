"""The turn runtime: budget, early stop, trace lines, deterministic replay, divergence detection, and
discovery of a domain shipped by a separate distribution through the entry-point group."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from rac_fw.contract import Action, Status
from rac_fw.domain import domain_names, load_domain
from rac_fw.runtime import Episode, replay

RIGHT = {"outputs": {"sum": [1, 2], "carry": [3]}}
WRONG = {"outputs": {"sum": [1, 2], "carry": [2]}}


def act(payload):
    return Action(domain="logic", task="half_adder", payload=payload)


def test_episode_stops_at_first_pass_and_returns_budget_verdict(tmp_path):
    trace = tmp_path / "t.jsonl"
    episode = Episode(load_domain("logic"), "half_adder", budget=3, trace=trace)
    assert episode.submit(act(WRONG)).status is Status.FAIL
    assert episode.submit(act(RIGHT)).status is Status.PASS
    after = episode.submit(act(RIGHT))
    assert after.status is Status.BUDGET and after.verdicts[0].predicate == "proposal_budget"
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert [line["status"] for line in lines] == ["fail", "pass"]
    assert set(lines[0]["timings_ms"]) == {"validate", "realize", "verify", "feedback"}
    assert lines[0]["artifact_hash"] and lines[0]["evidence"][0]["code"] == "E_TRUTH_TABLE"


def test_budget_is_spent_by_failures():
    episode = Episode(load_domain("logic"), "half_adder", budget=2)
    statuses = [episode.submit(act(WRONG)).status for _ in range(3)]
    assert statuses == [Status.FAIL, Status.FAIL, Status.BUDGET]


def test_invalid_action_stops_after_validate():
    episode = Episode(load_domain("logic"), "half_adder")
    fb = episode.submit(act({"outputs": {"sum": [7]}}))
    assert fb.status is Status.INVALID
    assert fb.artifact_hash is None
    assert set(episode.turns[0].timings_ms) == {"validate", "feedback"}


def test_replay_reports_no_divergence_then_catches_a_tampered_line(tmp_path):
    trace = tmp_path / "t.jsonl"
    episode = Episode(load_domain("logic"), "full_adder", budget=2, trace=trace)
    episode.submit(Action(domain="logic", task="full_adder",
                          payload={"outputs": {"sum": [1, 2, 4, 7], "cout": [3, 5, 6]}}))
    count, divergences = replay(trace)
    assert count == 1 and divergences == []
    line = json.loads(trace.read_text())
    line["artifact_hash"] = "0" * 64
    line["verdicts"][0]["passed"] = False
    trace.write_text(json.dumps(line) + "\n")
    _, divergences = replay(trace)
    assert {d.field for d in divergences} >= {"artifact_hash", "verdicts"}


def test_same_seed_same_artifact():
    dom = load_domain("logic")
    validation = dom.validate("priority_encoder4", Action(domain="logic", task="priority_encoder4", payload={
        "outputs": {"y1": list(range(4, 16)), "y0": [2, 3, *range(8, 16)], "valid": list(range(1, 16))}}))
    hashes = {dom.realize("priority_encoder4", validation.action, seed=7).artifact_hash for _ in range(3)}
    assert len(hashes) == 1


def test_third_party_domain_via_entry_point(tmp_path):
    """A separate distribution adds a domain without touching the runtime (real entry-point discovery)."""
    (tmp_path / "toy_domain.py").write_text(textwrap.dedent('''
        from pydantic import BaseModel
        from rac_fw.contract import Observation, Realization, Verdict, sha256_of
        from rac_fw.domain import Domain, Validation, Verification

        class ToyAction(BaseModel):
            value: int

        class ToyDomain(Domain):
            name = "toy"
            action_model = ToyAction
            def tasks(self): return ["double"]
            def observe(self, task, detail=None):
                return Observation(domain="toy", task=task, summary="commit to 42")
            def validate(self, task, action):
                return Validation(ToyAction.model_validate(action.payload))
            def realize(self, task, action, seed):
                art = {"value": action.value}
                return Realization(artifact=art, artifact_hash=sha256_of(art), seed=seed)
            def verify(self, task, action, realization):
                ok = realization.artifact["value"] == 42
                return Verification([Verdict(predicate="is_42", passed=ok)])
    '''))
    dist = tmp_path / "toy_domain-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-domain\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rac_fw.domains]\ntoy = toy_domain:ToyDomain\n")
    (tmp_path / "a.json").write_text('{"value": 42}')
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "rac_fw.cli", "submit", "toy", "double", str(tmp_path / "a.json")],
                         capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "is_42" in run.stdout
    assert "toy" not in domain_names()  # only visible where that distribution is installed
