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
    assert after.status is Status.CLOSED and after.verdicts[0].predicate == "episode_open"
    assert "passed at turn 2; 2 of 3 proposals" in after.verdicts[0].detail
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["header", "turn", "turn", "close"]
    assert lines[0]["budget"] == 3 and lines[0]["seed"] == 0 and len(lines[0]["facts_hash"]) == 64
    assert [line["status"] for line in lines[1:3]] == ["fail", "pass"] and lines[3]["outcome"] == "pass"
    assert set(lines[1]["timings_ms"]) == {"validate", "realize", "verify", "feedback"}
    assert lines[1]["artifact_hash"] and lines[1]["evidence"][0]["code"] == "E_TRUTH_TABLE"


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
    episode = Episode(load_domain("logic"), "full_adder", budget=1, trace=trace)
    episode.submit(Action(domain="logic", task="full_adder",
                          payload={"outputs": {"sum": [1, 2, 4, 7], "cout": [3, 5, 6]}}))
    count, divergences = replay(trace)
    assert count == 1 and divergences == []
    header, text, close = trace.read_text().splitlines()
    line = json.loads(text)
    line["artifact_hash"] = "0" * 64
    line["verdicts"][0]["passed"] = False
    trace.write_text("\n".join([header, json.dumps(line), close]) + "\n")
    _, divergences = replay(trace)
    assert {d.field for d in divergences} >= {"artifact_hash", "verdicts", "prev"}


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


# --- the trace as evidence: every forgery is found and located ---------------------------------------

def recorded(tmp_path, key=None):
    """A closed episode: header, failing turn 1, passing turn 2, close (4 lines)."""
    trace = tmp_path / "t.jsonl"
    episode = Episode(load_domain("logic"), "half_adder", budget=3, trace=trace, key=key)
    episode.submit(act(WRONG))
    episode.submit(act(RIGHT))
    return trace, trace.read_text().splitlines()


def rewrite(trace, lines):
    trace.write_text("".join(line + "\n" for line in lines))


def edit(text, **changes):
    record = json.loads(text)
    record.update(changes)
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def findings(trace, key=None):
    count, divergences = replay(trace, key)
    return [(d.line, d.field, d.message) for d in divergences]


def test_untouched_trace_replays_clean(tmp_path):
    trace, _ = recorded(tmp_path)
    assert replay(trace) == (2, [])


def test_reordered_turns(tmp_path):
    trace, (h, t1, t2, c) = recorded(tmp_path)
    rewrite(trace, [h, t2, t1, c])
    found = findings(trace)
    assert (2, "prev", "line 2 does not follow line 1: line 1 was edited, or lines between them were removed") \
        in found
    assert any(line == 3 and "turn 1 is out of order (after turn 2, line 2)" in m for line, _, m in found)
    assert any(line == 3 and "chained after line 1, not after line 2" in m for line, _, m in found)


def test_dropped_turn(tmp_path):
    trace, (h, t1, t2, c) = recorded(tmp_path)
    rewrite(trace, [h, t2, c])
    found = findings(trace)
    assert any(line == 2 and "turn(s) 1 missing before turn 2" in m for line, _, m in found)
    assert any(line == 3 and "counts 2 turn(s), the trace holds 1" in m for line, _, m in found)


def test_duplicated_turn(tmp_path):
    trace, (h, t1, t2, c) = recorded(tmp_path)
    rewrite(trace, [h, t1, t1, t2, c])
    found = findings(trace)
    assert any(line == 3 and "turn 1 is duplicated (also line 2)" in m for line, _, m in found)
    assert any(line == 3 and "chained after line 1, not after line 2" in m for line, _, m in found)


def test_renumbered_turn(tmp_path):
    trace, (h, t1, t2, c) = recorded(tmp_path)
    rewrite(trace, [h, t1, edit(t2, turn=5), c])
    found = findings(trace)
    assert any(line == 3 and "recorded as turn 5 but its feedback is for turn 2" in m for line, _, m in found)
    assert any(line == 4 and "line 3 was edited" in m for line, _, m in found)


def test_changed_seed_and_header(tmp_path):
    trace, (h, t1, t2, c) = recorded(tmp_path)
    rewrite(trace, [edit(h, seed=7), t1, t2, c])
    found = findings(trace)
    assert any(line == 2 and "seed 0 differs from the header's 7" in m for line, _, m in found)
    assert any(line == 2 and "line 1 was edited" in m for line, _, m in found)
    rewrite(trace, [edit(h, budget=9, facts_hash="f" * 64), t1, t2, c])
    found = findings(trace)
    assert any(line == 1 and field == "facts_hash" for line, field, _ in found)
    assert any(line == 2 and "line 1 was edited" in m for line, _, m in found)
    rewrite(trace, [h, edit(t1, seed=3), t2, c])
    assert any(line == 2 and "seed 3 differs from the header's 0" in m for line, _, m in findings(trace))


def test_truncated_episode(tmp_path):
    trace, (h, t1, t2, c) = recorded(tmp_path)
    rewrite(trace, [h, t1])
    assert any(field == "close" and "no closing record after line 2" in m for _, field, m in findings(trace))
    trace.write_text(f"{h}\n{t1}\n{t2[: len(t2) // 2]}")  # cut mid-line
    found = findings(trace)
    assert any(line == 3 and "cut off mid-record" in m for line, _, m in found)


def test_empty_trace(tmp_path):
    trace = tmp_path / "empty.jsonl"
    trace.write_text("")
    assert replay(trace) == (0, [replay(trace)[1][0]])
    assert "empty trace" in replay(trace)[1][0].message
    run = subprocess.run([sys.executable, "-m", "rac_fw.cli", "replay", str(trace)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1 and f"{trace}:1" in run.stdout and "empty trace" in run.stdout


def test_unknown_fields(tmp_path):
    trace, (h, t1, t2, c) = recorded(tmp_path)
    rewrite(trace, [h, edit(t1, note="hi"), t2, c])
    assert any(line == 2 and "unknown field 'note'" in m for line, _, m in findings(trace))


def test_hidden_failed_turn(tmp_path):
    """Delete the failing turn 1 and renumber the passing turn 2 as turn 1 (feedback too)."""
    trace, (h, t1, t2, c) = recorded(tmp_path)
    forged = json.loads(t2)
    forged["turn"] = forged["feedback"]["turn"] = 1
    rewrite(trace, [h, json.dumps(forged, sort_keys=True, separators=(",", ":")), c])
    found = findings(trace)
    assert any(line == 2 and "does not follow line 1" in m for line, _, m in found)
    assert any(line == 3 and "counts 2 turn(s), the trace holds 1" in m for line, _, m in found)
    # even with the whole chain and closing record recomputed, the key's signature gives it away
    key = b"k" * 32
    trace, (h, t1, t2, c) = recorded(tmp_path / "signed", key=key)
    from rac_fw.trace import TraceWriter

    forged = json.loads(t2)
    forged["turn"] = forged["feedback"]["turn"] = 1
    rebuilt = tmp_path / "rebuilt.jsonl"
    writer = TraceWriter(rebuilt, key=b"another key, not the user's")
    for record in (json.loads(h), forged, {**json.loads(c), "turns": 1}):
        writer.append(record)
    assert replay(rebuilt)[1] == []  # a self-consistent forgery passes the chain alone...
    found = findings(rebuilt, key)
    assert [line for line, field, _ in found if field == "mac"] == [1, 2, 3]  # ...not the signature


def test_signed_trace_checks_with_key(tmp_path):
    key = b"s" * 32
    trace, (h, t1, t2, c) = recorded(tmp_path, key=key)
    assert replay(trace, key) == (2, [])
    found = findings(trace, b"wrong key, 16+ bytes")
    assert {line for line, field, _ in found if field == "mac"} == {1, 2, 3, 4}
    unsigned, _ = recorded(tmp_path / "u")
    assert any("is not signed, but a key was given" in m for _, _, m in findings(unsigned, key))


def test_cli_submit_continues_the_episode_and_signs(tmp_path):
    key = tmp_path / "key"
    key.write_text("0123456789abcdef0123\n")
    wrong, right = tmp_path / "wrong.json", tmp_path / "right.json"
    wrong.write_text(json.dumps(WRONG))
    right.write_text(json.dumps(RIGHT))
    trace = tmp_path / "t.jsonl"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "rac_fw.cli", *args], capture_output=True, text=True, timeout=60)

    assert cli("submit", "logic", "half_adder", str(wrong), "--trace", str(trace), "--key", str(key)).returncode == 1
    assert cli("submit", "logic", "half_adder", str(right), "--trace", str(trace), "--key", str(key)).returncode == 0
    after = cli("submit", "logic", "half_adder", str(right), "--trace", str(trace), "--key", str(key), "--json")
    assert after.returncode == 2 and json.loads(after.stdout)["status"] == "closed"
    assert [json.loads(x)["kind"] for x in trace.read_text().splitlines()] == ["header", "turn", "turn", "close"]
    ok = cli("replay", str(trace), "--key", str(key))
    assert ok.returncode == 0 and "replayed 2 turn(s): 0 divergence(s)" in ok.stdout
    other = cli("submit", "logic", "full_adder", str(right), "--trace", str(trace))
    assert other.returncode == 2 and "records logic/half_adder" in other.stdout
