"""Logic domain: the verifier's independence and structural checks, the CLI's exit codes and located
errors for bad input, and the calibration run."""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rac_fw.contract import Action, sha256_of
from rac_fw.domain import load_domain
from rac_fw.domains.logic import verify as verifier
from rac_fw.domains.logic.tasks import all_tasks, get_task

CLI = [sys.executable, "-m", "rac_fw.cli"]


def run_cli(*args, cwd=None):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_verifier_imports_neither_the_realizer_nor_its_minimiser():
    source = Path(verifier.__file__).read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            imported |= {f"{node.module}.{a.name}" for a in node.names}
    assert not any(name.endswith(("realize", "sop")) or ".realize" in name or ".sop" in name for name in imported)
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, rac_fw.domains.logic.verify; print(sorted(m for m in sys.modules "
         "if m.startswith(('sympy', 'rac_fw.domains.logic.realize', 'rac_fw.domains.logic.sop'))))"],
        capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "[]"


def test_ten_designs_with_at_most_four_inputs():
    tasks = all_tasks()
    assert len(tasks) == 10
    assert all(len(t.inputs) <= 4 for t in tasks.values())


def _honest(task_name):
    dom = load_domain("logic")
    t = get_task(task_name)
    action = dom.validate(task_name, Action(domain="logic", task=task_name, payload={
        "outputs": {o: sorted(t.ones[o]) for o in t.outputs}})).action
    return dom, t, action, dom.realize(task_name, action, seed=0)


@pytest.mark.parametrize("mutation, code", [
    ("cycle", "E_CYCLE"),
    ("unknown_gate", "E_UNKNOWN_GATE"),
    ("undeclared_port", "E_UNDECLARED_PORT"),
    ("arity", "E_GATE_ARITY"),
])
def test_structural_violations_are_named(mutation, code):
    _, t, action, real = _honest("full_adder")
    net = copy.deepcopy(real.artifact)
    gate = next(g for g in net["gates"] if g["op"] in ("AND", "OR"))
    if mutation == "cycle":
        gate["in"].append(net["outputs"]["sum"] if net["outputs"]["sum"] != gate["id"] else gate["id"])
    elif mutation == "unknown_gate":
        gate["op"] = "XOR3"
    elif mutation == "undeclared_port":
        gate["in"].append("z")
    else:
        next(g for g in net["gates"] if g["op"] == "NOT")["in"].append("a")
    forged = real.model_copy(update={"artifact": net, "artifact_hash": sha256_of(net)})
    result = verifier.verify(t, action.outputs, forged)
    assert not result.ok
    assert code in {e.code for e in result.evidence}


def test_receipt_is_never_trusted():
    _, t, action, real = _honest("majority3")
    net = copy.deepcopy(real.artifact)
    net["outputs"]["m"] = "a"  # wire the output straight to an input
    forged = real.model_copy(update={"artifact": net})  # stale hash, receipt still claims success
    result = verifier.verify(t, action.outputs, forged)
    codes = {e.code for e in result.evidence}
    assert {"E_ARTIFACT_HASH", "E_TRUTH_TABLE", "E_NOT_REALIZED"} <= codes


def test_calibrate_logic_cli():
    run = run_cli("calibrate", "logic")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert lines[-1] == "40 passed, 0 failed"
    assert len(lines) == 41


@pytest.mark.parametrize("content, suffix, expect", [
    ('{"outputs": {"sum": [1, 2]', ".json", "line 1"),
    ("outputs: {sum: [1, 2]\n  carry: [3", ".yaml", "line"),
    ('{"outputs": {"sum": [1, "two"], "carry": [3]}}', ".json", "payload.outputs.sum[1]"),
    ('{"outputs": {"sum": [1, 2], "carry": [3], "bogus": [1]}}', ".json", "payload.outputs.bogus"),
    ('{"outputs": {"sum": [1, 2], "carry": [3, 4]}}', ".json", "payload.outputs.carry[1]"),
    ('{"outputs": {"sum": [1, 2, 2], "carry": [3]}}', ".json", "E_DUPLICATE_MINTERM"),
    ('{"outputs": {"sum": [1, 2]}}', ".json", "E_MISSING_OUTPUT"),
    ('[1, 2, 3]', ".json", "mapping"),
])
def test_bad_actions_exit_2_with_location(tmp_path, content, suffix, expect):
    path = tmp_path / f"action{suffix}"
    path.write_text(content)
    run = run_cli("submit", "logic", "half_adder", str(path))
    assert run.returncode == 2
    out = run.stdout + run.stderr
    assert expect in out and str(path) in out
    assert "Traceback" not in out


def test_unknown_task_and_domain_exit_2(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"outputs": {}}')
    for args, needle in ((("logic", "no_such"), "E_UNKNOWN_TASK"), (("no_such", "x"), "E_UNKNOWN_DOMAIN")):
        run = run_cli("submit", *args, str(path))
        out = run.stdout + run.stderr
        assert run.returncode == 2 and needle in out and "Traceback" not in out


def test_submit_trace_then_replay_has_no_divergence(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.json"
    good.write_text("outputs:\n  sum: [1, 2]\n  carry: [3]\n")
    bad.write_text(json.dumps({"outputs": {"sum": [1], "carry": [3]}}))
    trace = tmp_path / "trace.jsonl"
    assert run_cli("submit", "logic", "half_adder", str(bad), "--trace", str(trace)).returncode == 1
    assert run_cli("submit", "logic", "half_adder", str(good), "--trace", str(trace), "--json").returncode == 0
    run = run_cli("replay", str(trace))
    assert run.returncode == 0 and "replayed 2 turn(s): 0 divergence(s)" in run.stdout


def test_json_feedback_is_versioned():
    good = Path(__file__).parent / "data_half_adder.json"
    run = run_cli("submit", "logic", "half_adder", str(good), "--json")
    doc = json.loads(run.stdout)
    assert doc["protocol"] == "1.0" and doc["status"] == "pass"
    schema = json.loads(run_cli("schema", "feedback").stdout)
    assert "protocol" in schema["properties"]
