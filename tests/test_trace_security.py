"""Traces as evidence (issue 27): a replay says when signatures went unchecked, `submit --trace` does not
append unsigned lines to a signed trace, and an unsigned header's budget cannot be raised and re-chained
unnoticed. Driven through the CLI on real trace files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from rac_fw.limits import Limits
from rac_fw.trace import TraceWriter

WRONG = {"outputs": {"sum": [1, 2], "carry": [2]}}
RIGHT = {"outputs": {"sum": [1, 2], "carry": [3]}}
REPO = Path(__file__).resolve().parent.parent


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rac_fw.cli", *args], capture_output=True, text=True, timeout=120)


def episode(tmp_path: Path, *key: str, wrongs: int = 5, passing: bool = False) -> Path:
    """A half_adder episode through `rac-fw submit --trace`: ``wrongs`` failing proposals, then a passing one."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    trace = tmp_path / "t.jsonl"
    for payload in [WRONG] * wrongs + [RIGHT] * passing:
        action = tmp_path / "action.json"
        action.write_text(json.dumps(payload))
        ran = cli("submit", "logic", "half_adder", str(action), "--trace", str(trace), *key)
        assert ran.returncode == (0 if payload is RIGHT else 1), ran.stdout
    return trace


def test_replay_of_a_signed_trace_without_key_says_signatures_went_unchecked(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("0123456789abcdef0123\n")
    trace = episode(tmp_path, "--key", str(key), wrongs=1, passing=True)
    bare = cli("replay", str(trace))
    assert bare.returncode == 0, bare.stdout + bare.stderr
    summary = " ".join(bare.stdout.split())
    assert "0 divergence(s); signatures NOT checked: 4 of 4 line(s) are signed but no --key was given" in summary
    checked = cli("replay", str(trace), "--key", str(key))
    assert checked.returncode == 0 and "signatures checked with the key (4 of 4" in " ".join(checked.stdout.split())
    unsigned = cli("replay", str(episode(tmp_path / "u", wrongs=0, passing=True)))
    assert unsigned.returncode == 0 and "unsigned trace" in unsigned.stdout


def test_submit_without_key_does_not_extend_a_signed_trace(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("0123456789abcdef0123\n")
    trace = episode(tmp_path, "--key", str(key), wrongs=1)
    before = trace.read_bytes()
    right = tmp_path / "right.json"
    right.write_text(json.dumps(RIGHT))
    refused = cli("submit", "logic", "half_adder", str(right), "--trace", str(trace), "--json")
    assert refused.returncode == 2, refused.stdout
    ev = json.loads(refused.stdout)["evidence"][0]
    assert ev["code"] == "E_TRACE" and "the trace is signed" in ev["message"] and "--key" in ev["message"]
    assert trace.read_bytes() == before
    assert cli("submit", "logic", "half_adder", str(right), "--trace", str(trace), "--key", str(key)).returncode == 0


def test_raised_budget_in_an_unsigned_trace_is_noticed(tmp_path: Path) -> None:
    """Spend the budget of 5, then rewrite the header to a budget of 10, drop the closing record and re-chain
    every line: the chain is intact, but the header claims more than was granted, so `submit --trace`
    refuses to continue it and `replay` reports it, unless the checker grants that budget (--budget 10)."""
    trace = episode(tmp_path)
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["budget"] == 5 and records[-1]["kind"] == "close"
    forged = tmp_path / "forged.jsonl"
    writer = TraceWriter(forged)
    for record in [{**records[0], "budget": 10}, *records[1:-1]]:
        writer.append({k: v for k, v in record.items() if k != "prev"})
    right = tmp_path / "right.json"
    right.write_text(json.dumps(RIGHT))
    extended = cli("submit", "logic", "half_adder", str(right), "--trace", str(forged), "--json")
    assert extended.returncode == 2, extended.stdout
    ev = json.loads(extended.stdout)["evidence"][0]
    assert ev["code"] == "E_TRACE" and "claims a budget of 10 proposals, more than the 5 granted" in ev["message"]
    replayed = cli("replay", str(forged))
    assert replayed.returncode == 1 and re.search(r"forged\.jsonl:1 budget: .*budget of 10", replayed.stdout)
    granted = cli("replay", str(forged), "--budget", "10")
    assert "budget of 10" not in granted.stdout  # what the checker granted; the open episode is still reported
    assert "no closing record" in granted.stdout


def test_protocol_limits_table_is_the_code(tmp_path: Path) -> None:
    """docs/PROTOCOL.md's limit table lists every limit with the default the code uses (it once said 1,024
    operations where the plan model caps them at 64)."""
    text = (REPO / "docs" / "PROTOCOL.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", text, re.M))
    defaults = Limits()
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for name in Limits.names():
        assert name in rows, f"{name} is missing from PROTOCOL.md's limit table"
        shown = rows[name].strip().replace(",", "").replace(" ", "")
        number = re.fullmatch(r"([\d.]+)(KiB|MiB|GiB|s)?", shown)
        assert number is not None, (name, shown)
        value = float(number.group(1)) * units.get(number.group(2) or "", 1)
        assert value == getattr(defaults, name), (name, shown, getattr(defaults, name))
