"""The stable JSON protocol: every `--json` document validates against the schema `rac-fw schema NAME`
publishes, whatever the outcome; hostile traces and unwritable paths end as located evidence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "rac_fw.cli"]


def rac(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def schema(name: str) -> dict:
    run = rac("schema", name)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("args, schema_name, code", [
    (("submit", "logic", "half_adder", str(REPO / "tests/data_half_adder.json"), "--json"), "feedback", 0),
    (("submit", "logic", "no_such_task", str(REPO / "tests/data_half_adder.json"), "--json"), "feedback", 2),
    (("submit", "no_such_domain", "x", str(REPO / "tests/data_half_adder.json"), "--json"), "feedback", 2),
    (("observe", "logic", "half_adder", "--json"), "observation", 0),
    (("observe", "firmware", "stm32h743", "--json"), "observation", 0),
    (("plan", str(REPO / "examples/adc_dt.yaml"), "--target", "nrf52840", "--json"), "plan-result", 0),
    (("plan", str(REPO / "examples/adc_dt.yaml"), "--target", "no_such_chip", "--json"), "plan-result", 2),
])
def test_json_outputs_follow_their_published_schema(args, schema_name, code):
    run = rac(*args)
    assert run.returncode == code, run.stdout + run.stderr
    document = json.loads(run.stdout)
    jsonschema.validate(document, schema(schema_name))
    if schema_name != "observation":
        assert document["protocol"] == "1.0" and document["status"] in {"pass", "fail", "invalid"}


def test_malformed_action_file_is_still_a_feedback_document(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"outputs": [')
    run = rac("submit", "logic", "half_adder", str(bad), "--json")
    assert run.returncode == 2
    document = json.loads(run.stdout)
    jsonschema.validate(document, schema("feedback"))
    assert document["evidence"][0]["code"] == "E_SYNTAX" and str(bad) in document["evidence"][0]["location"]


def test_unwritable_trace_fails_before_the_turn(tmp_path):
    run = rac("submit", "logic", "half_adder", str(REPO / "tests/data_half_adder.json"), "--trace", str(tmp_path))
    assert run.returncode == 2 and "E_FILE" in run.stdout and "Traceback" not in run.stdout + run.stderr


@pytest.mark.parametrize("line, needle", [
    ("[1, 2, 3]", "not a trace record"),
    ('"hello"', "not a trace record"),
    ('{"turn": 1, "domain": ["logic"], "task": "half_adder", "action": {}}', "domain"),
    ('{"turn": 1, "domain": "logic", "task": "half_adder", "seed": 0, '
     '"action": {"domain": "logic", "task": "other", "payload": {}}}', "recorded for logic/half_adder"),
    ("{not json", "is not JSON"),
])
def test_hostile_trace_lines_are_located(tmp_path, line, needle):
    trace = tmp_path / "t.jsonl"
    good = rac("submit", "logic", "half_adder", str(REPO / "tests/data_half_adder.json"), "--trace", str(trace))
    assert good.returncode == 0
    with trace.open("a") as fh:
        fh.write(line + "\n")
    run = rac("replay", str(trace))
    out = run.stdout + run.stderr
    # header, the passing turn, the closing record, then the hostile line
    assert run.returncode == 2 and needle in out and f"{trace}:4" in out and "Traceback" not in out
