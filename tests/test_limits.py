"""Bounded inputs: every limit answers E_TOO_LARGE (limit and size, located, exit 2) before expensive work;
numbers no field admits answer E_NUMBER_RANGE with the admissible range; the MCP server refuses an
oversized call and keeps serving other sessions. Timings live in benchmarks/bench_limits.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from test_mcp import RIGHT, WRONG, result, start_http, stdio_client, stop

from rac_fw.contract import Action, Status
from rac_fw.domain import load_domain
from rac_fw.limits import Limits, set_limits
from rac_fw.runtime import Episode

REPO = Path(__file__).resolve().parent.parent
BLINK = {"op": "gpio_blink", "led": "led0", "period_ms": 500}


def rac(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rac_fw.cli", *args], capture_output=True, text=True, timeout=120)


def too_large(doc: dict, limit: str) -> dict:
    ev = next(e for e in doc["evidence"] if e["code"] == "E_TOO_LARGE")
    assert ev["objects"] == [limit], ev
    assert {m["name"] for m in ev["magnitudes"]} == {limit, "excess"}
    assert str(getattr(Limits(), limit)) in ev["message"] or limit in ev["message"]
    return ev


@pytest.fixture(autouse=True)
def default_limits():
    set_limits(Limits())
    yield
    set_limits(Limits())


def test_oversized_plan_file_is_refused_before_parsing(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("target: nrf52840\noperations: []\n# " + "x" * (2 << 20) + "\n")
    run = rac("plan", str(big), "--json")
    assert run.returncode == 2, run.stdout + run.stderr
    ev = too_large(json.loads(run.stdout), "plan_bytes")
    assert ev["location"] == str(big) and ev["magnitudes"][0]["value"] > 2 << 20


def test_60k_operations(tmp_path):
    plan = tmp_path / "ops.json"
    plan.write_text(json.dumps({"target": "nrf52840", "operations": [BLINK] * 60_000}))
    by_bytes = rac("plan", str(plan), "--json")
    assert by_bytes.returncode == 2
    too_large(json.loads(by_bytes.stdout), "plan_bytes")
    # with the byte limits raised, the operation count is what refuses it
    run = rac("plan", str(plan), "--json", "--limit", "plan_bytes=100000000,payload_bytes=100000000")
    assert run.returncode == 2
    ev = too_large(json.loads(run.stdout), "operations")
    assert ev["location"].endswith("operations") and ev["magnitudes"][0]["value"] == 60_000
    # the limit is the user's to set: a 3-operation plan under operations=2
    small = tmp_path / "three.json"
    small.write_text(json.dumps({"target": "nrf52840", "operations": [BLINK] * 3}))
    assert "E_TOO_LARGE" in rac("plan", str(small), "--json", "--limit", "operations=2").stdout
    bad = rac("plan", str(small), "--limit", "operation=2")
    assert bad.returncode == 2 and "unknown limit 'operation'" in bad.stderr and "Traceback" not in bad.stderr


def test_1_3m_minterms_and_the_minterm_limit(tmp_path):
    episode = Episode(load_domain("logic"), "half_adder", budget=2, trace=tmp_path / "t.jsonl")
    huge = {"outputs": {"sum": list(range(1_300_000)), "carry": [3]}}
    fb = episode.submit(Action(domain="logic", task="half_adder", payload=huge))
    assert fb.status is Status.INVALID and fb.evidence[0].code == "E_TOO_LARGE"
    assert fb.evidence[0].objects == ["payload_bytes"] and episode.turns == []  # refused: nothing spent
    assert not (tmp_path / "t.jsonl").exists()  # and nothing traced
    set_limits(Limits(payload_bytes=100 << 20))
    fb = episode.submit(Action(domain="logic", task="half_adder", payload=huge))
    assert fb.evidence[0].objects == ["list_items"] and fb.evidence[0].location == "payload: outputs.sum"
    many = {"outputs": {"sum": list(range(3000)), "carry": list(range(3000))}}
    fb = episode.submit(Action(domain="logic", task="half_adder", payload=many))
    assert fb.evidence[0].objects == ["minterms"] and fb.evidence[0].magnitudes[0].value == 6000
    assert len(episode.turns) == 2  # shape and count limits are invalid proposals: spent and traced


def test_cli_submit_minterms(tmp_path):
    action = tmp_path / "a.json"
    action.write_text(json.dumps({"outputs": {"sum": list(range(1_300_000)), "carry": [3]}}))
    run = rac("submit", "logic", "half_adder", str(action), "--json")
    assert run.returncode == 2
    too_large(json.loads(run.stdout), "plan_bytes")


@pytest.mark.parametrize("text, shown", [
    ('{"target": "nrf52840", "operations": [{"op": "pwm_fade", "output": "led0", "period_us": 1000, '
     '"step_percent": 5.0e-324, "interval_ms": 20}]}', "5e-324 is too small"),
    ('{"target": "nrf52840", "operations": [{"op": "pwm_fade", "output": "led0", "period_us": 1000, '
     '"step_percent": NaN, "interval_ms": 20}]}', "nan is not a finite number"),
    ('{"target": "nrf52840", "operations": [{"op": "gpio_blink", "led": "led0", "period_ms": 1e400}]}',
     "inf is not a finite number"),
    ('{"target": "nrf52840", "operations": [{"op": "gpio_blink", "led": "led0", "period_ms": 1' + "0" * 400 + '}]}',
     "astronomically large"),
])
def test_numbers_no_field_admits(tmp_path, text, shown):
    plan = tmp_path / "p.json"
    plan.write_text(text)
    run = rac("plan", str(plan), "--json")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stdout + run.stderr
    ev = json.loads(run.stdout)["evidence"][0]
    assert ev["code"] == "E_NUMBER_RANGE" and shown in ev["message"] and "[1e-09, 1e+12]" in ev["message"]
    assert ev["location"].endswith(("operations[0].step_percent", "operations[0].period_ms"))
    assert ev["relaxations"][0]["patch"][0]["op"] == "replace"


def test_trace_line_limit(tmp_path):
    set_limits(Limits(trace_line_bytes=300))
    episode = Episode(load_domain("logic"), "half_adder", budget=2, trace=tmp_path / "t.jsonl")
    fb = episode.submit(Action(domain="logic", task="half_adder", payload=RIGHT))
    assert fb.evidence[0].code == "E_TOO_LARGE" and fb.evidence[0].objects == ["trace_line_bytes"]
    assert episode.turns == []


def test_10mb_mcp_payload_refused_server_keeps_serving(tmp_path):
    proc, url = start_http(tmp_path)
    try:
        async def main():
            async with Client(url, read_timeout_seconds=60) as a, Client(url, read_timeout_seconds=60) as b:
                sa = result(await a.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
                sb = result(await b.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
                payload = {"outputs": {"sum": [1, 2], "carry": [3]}, "pad": "x" * (10 << 20)}
                big = await a.call_tool("submit_logic", {"session": sa, "payload": payload})
                assert big.is_error
                ev = result(big)["evidence"][0]
                assert ev["code"] == "E_TOO_LARGE" and ev["objects"] == ["payload_bytes"]
                assert ev["magnitudes"][0]["value"] > 10 << 20
                # a's session spent nothing; b's session is served as before
                assert result(await a.call_tool("session_info", {"session": sa}))["proposals_used"] == 0
                assert result(await b.call_tool("submit_logic", {"session": sb, "payload": RIGHT}))["status"] == "pass"
                assert result(await a.call_tool("submit_logic", {"session": sa, "payload": RIGHT}))["status"] == "pass"
        asyncio.run(main())
    finally:
        stop(proc)


def test_request_time_ceiling_spares_other_sessions(tmp_path):
    """A tool call past request_seconds is abandoned with E_TIMEOUT; the server answers the next calls.

    The slow call is a tool registered on the real server through the same ``guarded`` boundary as every
    rac-fw tool (a QEMU or CP-SAT run's duration depends on the machine; a sleep does not)."""
    import threading

    from rac_fw.mcp.server import ServerConfig, build_server, guarded

    release = threading.Event()
    server = build_server(ServerConfig(workdir=tmp_path / "mcp"))

    def stuck() -> dict:
        release.wait(30)
        return {"status": "pass"}

    server.add_tool(guarded(stuck), name="stuck")

    async def main():
        async with Client(server, read_timeout_seconds=60) as a:
            sid = result(await a.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
            assert result(await a.call_tool("submit_logic", {"session": sid, "payload": WRONG}))["status"] == "fail"
            set_limits(Limits(request_seconds=2))
            late = result(await a.call_tool("stuck", {}))
            ev = late["evidence"][0]
            assert ev["code"] == "E_TIMEOUT" and ev["objects"] == ["request_seconds"] and "2 s" in ev["message"]
            fb = result(await a.call_tool("submit_logic", {"session": sid, "payload": RIGHT}))
            assert fb["status"] == "pass"
    try:
        asyncio.run(main())
    finally:
        release.set()


def test_request_memory_ceiling_spares_other_sessions(tmp_path):
    """A turn needing more memory than request_memory_bytes is stopped in its worker with E_TOO_LARGE (the
    limit and the measured growth), spends nothing, and the next session is served by the same server.

    The heavy request is a real one within every input limit: eight 60 000-item lists (960 kB) that the
    runtime's input check and the logic domain's parse must hold in memory (about 10 MB), served by
    ``rac-fw serve mcp --limit request_memory_bytes=8388608`` through the SDK's stdio client."""
    heavy = {"outputs": {f"o{i}": [1] * 60000 for i in range(8)}}
    assert len(json.dumps(heavy, separators=(",", ":"))) < Limits().payload_bytes
    ceiling = 8 << 20

    async def main():
        # payload_tokens raised so the request passes every input limit and reaches the memory ceiling
        async with stdio_client(tmp_path, 3, "--limit", f"request_memory_bytes={ceiling},payload_tokens=2000000") as \
                client:
            a = result(await client.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
            b = result(await client.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
            refused = result(await client.call_tool("submit_logic", {"session": a, "payload": heavy}))
            assert refused["status"] == "invalid", refused
            ev = refused["evidence"][0]
            assert ev["code"] == "E_TOO_LARGE" and ev["objects"] == ["request_memory_bytes"], ev
            measured, limit = ev["magnitudes"]
            assert limit == {"name": "limit", "value": ceiling, "unit": "bytes"}
            assert measured["name"] == "request_memory_bytes" and measured["value"] > ceiling
            assert result(await client.call_tool("session_info", {"session": a}))["proposals_used"] == 0
            assert result(await client.call_tool("submit_logic", {"session": b, "payload": RIGHT}))["status"] == "pass"
            assert result(await client.call_tool("submit_logic", {"session": a, "payload": RIGHT}))["status"] == "pass"
    asyncio.run(main())
