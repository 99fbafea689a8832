"""The MCP server driven by the SDK's own client: over stdio (spawning `rac-fw serve mcp`) and over
streamable HTTP on 127.0.0.1. Episodes, budget, isolation, malformed arguments, firmware repair."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SERVE = [sys.executable, "-m", "rac_fw.cli", "serve", "mcp"]
RIGHT = {"outputs": {"sum": [1, 2], "carry": [3]}}
WRONG = {"outputs": {"sum": [1, 2], "carry": [2]}}


def result(res):
    """The tool's JSON result (structured content, or the text block)."""
    if res.structured_content is not None:
        return res.structured_content
    return json.loads(res.content[0].text)


@asynccontextmanager
async def stdio_client(workdir: Path, budget: int = 3, *extra: str):
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "--workdir", str(workdir),
                                                            "--budget", str(budget), *extra])
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http(tmp_path, *extra: str):
    """Start `rac-fw serve mcp --http` on a free loopback port; returns (process, url)."""
    port = free_port()
    proc = subprocess.Popen([*SERVE, "--http", "--port", str(port), "--workdir", str(tmp_path / "http"),
                             "--budget", "3", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90  # a loaded machine can take long to import everything
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("HTTP server did not start listening within 90 s")
    return proc, f"http://127.0.0.1:{port}/mcp"


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def http_server(tmp_path):
    proc, url = start_http(tmp_path)
    yield url
    stop(proc)


async def logic_episode_checks(client, workdir: Path | None):
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"list_tasks", "observe", "schema", "start_episode", "submit", "submit_logic"} <= names

    first = result(await client.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))
    other = result(await client.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))
    assert first["session"] != other["session"] and first["budget"] == 3
    assert first["observation"]["data"]["inputs"] == ["a", "b"]

    fb = result(await client.call_tool("submit_logic", {"session": first["session"], "payload": WRONG}))
    assert fb["status"] == "fail" and fb["evidence"][0]["code"] == "E_TRUTH_TABLE"
    # the other session is untouched by the first one's failure
    info = result(await client.call_tool("session_info", {"session": other["session"]}))
    assert info["proposals_used"] == 0
    fb = result(await client.call_tool("submit_logic", {"session": first["session"], "payload": RIGHT}))
    assert fb["status"] == "pass" and fb["proposals_used"] == 2

    # malformed arguments: an error result, and the server keeps serving
    bad = await client.call_tool("submit", {"session": 5})
    assert bad.is_error
    located = {e["location"] for e in result(bad)["evidence"]}
    assert {"arguments.session", "arguments.payload"} <= located and result(bad)["status"] == "invalid"
    unknown = result(await client.call_tool("observe", {"domain": "logic", "task": "no_such"}))
    assert unknown["status"] == "invalid" and unknown["evidence"][0]["code"] == "E_UNKNOWN_TASK"
    invalid = result(await client.call_tool("submit_logic", {"session": other["session"],
                                                             "payload": {"outputs": {"sum": [9]}}}))
    assert invalid["status"] == "invalid"
    assert {e["code"] for e in invalid["evidence"]} >= {"E_MINTERM_RANGE", "E_MISSING_OUTPUT"}

    # budget: 3 proposals, the 4th gets the budget verdict
    for payload in (WRONG, WRONG):
        result(await client.call_tool("submit_logic", {"session": other["session"], "payload": payload}))
    over = result(await client.call_tool("submit_logic", {"session": other["session"], "payload": RIGHT}))
    assert over["status"] == "budget" and over["verdicts"][0]["predicate"] == "proposal_budget"

    if workdir is not None:
        trace = workdir / first["session"] / "trace.jsonl"
        lines = [json.loads(x) for x in trace.read_text().splitlines()]
        assert [x["kind"] for x in lines] == ["header", "turn", "turn", "close"]
        assert [x["status"] for x in lines[1:3]] == ["fail", "pass"]
        sizes = lines[1]["sizes"]
        assert sizes["observation"]["bytes"] > 0 and 0 < sizes["action"]["tokens"] < sizes["action"]["bytes"]
        # header, 3 proposals (the invalid one spends and is traced too), close; the 4th was not judged
        assert (workdir / other["session"] / "trace.jsonl").read_text().count("\n") == 5
        from rac_fw.runtime import replay

        assert replay(trace) == (2, [])


def test_stdio_logic_episode_budget_isolation_and_errors(tmp_path):
    async def main():
        async with stdio_client(tmp_path) as client:
            await logic_episode_checks(client, tmp_path)
    asyncio.run(main())


def test_concurrent_stdio_servers_stay_isolated(tmp_path):
    async def one(name):
        async with stdio_client(tmp_path / name, budget=1) as client:
            started = result(await client.call_tool("start_episode", {"domain": "logic", "task": "majority3"}))
            payload = {"outputs": {"m": [3, 5, 6, 7]}} if name == "a" else {"outputs": {"m": [7]}}
            fb = result(await client.call_tool("submit", {"session": started["session"], "payload": payload}))
            return started["session"], fb["status"]

    async def main():
        return await asyncio.gather(one("a"), one("b"))

    (sid_a, status_a), (sid_b, status_b) = asyncio.run(main())
    assert (status_a, status_b) == ("pass", "fail")
    assert (tmp_path / "a" / sid_a / "trace.jsonl").exists() and not (tmp_path / "a" / sid_b).exists()


def test_http_transport_on_loopback(http_server):
    async def main():
        async with Client(http_server, read_timeout_seconds=60) as client:
            await logic_episode_checks(client, None)
    asyncio.run(main())


def test_concurrent_sessions_over_http(http_server):
    async def one(payload):
        async with Client(http_server, read_timeout_seconds=60) as client:
            started = result(await client.call_tool("start_episode", {"domain": "logic", "task": "parity4"}))
            fb = result(await client.call_tool("submit", {"session": started["session"], "payload": payload}))
            info = result(await client.call_tool("session_info", {"session": started["session"]}))
            return fb["status"], info["proposals_used"]

    good = {"outputs": {"p": [1, 2, 4, 7, 8, 11, 13, 14]}}
    bad = {"outputs": {"p": [1]}}

    async def main():
        return await asyncio.gather(one(good), one(bad), one(good))

    assert asyncio.run(main()) == [("pass", 1), ("fail", 1), ("pass", 1)]


CONFLICT_PLAN = {
    "target": "stm32f407",
    "resources": {"pins": [{"name": "tx", "pin": "PA2", "function": "USART2_TX"}, {"name": "status", "pin": "PA2"}]},
    "operations": [{"op": "gpio_blink", "led": "status", "period_ms": 500},
                   {"op": "uart_print", "uart": "USART2", "message": "hi"}],
}


async def firmware_repair_checks(client, relaxed_via="submit_firmware"):
    started = result(await client.call_tool("start_episode", {"domain": "firmware", "task": "stm32f407"}))
    assert len(json.dumps(started["observation"])) < 12_000
    sid = started["session"]
    fb = result(await client.call_tool("submit_firmware", {"session": sid, "payload": CONFLICT_PLAN}))
    assert fb["status"] == "invalid"
    conflict = next(e for e in fb["evidence"] if e["code"] == "E_PIN_CONFLICT")
    assert {"PA2", "tx", "status"} <= set(conflict["objects"])
    from rac_fw.contract import apply_patch

    relaxed = apply_patch(CONFLICT_PLAN, conflict["relaxations"][0]["patch"])
    args = {"session": sid, "payload" if relaxed_via == "submit_firmware" else "plan": relaxed}
    fb = result(await client.call_tool(relaxed_via, args))
    assert fb["status"] == "pass", fb["evidence"]
    return sid, fb


def test_stdio_firmware_pin_conflict_then_relaxed_plan(tmp_path):
    async def main():
        bench = Path(__file__).resolve().parent.parent / "hil" / "bench.yaml"
        async with stdio_client(tmp_path, 4, "--bench", str(bench)) as client:
            # the relaxed plan goes through the plan tool: a clean verdict writes the artifact into the session
            sid, planned = await firmware_repair_checks(client, relaxed_via="plan")
            # one orchestration: the turn's stages then the write, each once (no second lower/verify)
            ran = [s["stage"] for s in planned["stages"]]
            assert ran == ["parse", "resolve", "check", "lower", "verify", "write"], ran
            assert all(s["ms"] >= 0 for s in planned["stages"])
            assert planned["artifact"]["files"]
            assert Path(planned["artifact"]["dir"]).is_relative_to(tmp_path / sid)
            # flash without --allow-flash: says what it would do (a bench board only), writes nothing
            dry = result(await client.call_tool("flash", {"session": sid, "board": "disc1-f407"}))
            assert dry["status"] == "dry-run" and dry["would_flash"]["board"] == "disc1-f407"
            assert dry["would_flash"]["board_target"] == "stm32f407"
            for hostile in ("../../etc/passwd", "no-such-board"):
                refused = result(await client.call_tool("flash", {"session": sid, "board": hostile}))
                assert refused["status"] == "invalid" and "would_flash" not in refused
                assert refused["evidence"][0]["code"] == "E_UNKNOWN_BOARD"
            wrong = result(await client.call_tool("build", {"session": "nope"}))
            assert wrong["status"] == "invalid" and "unknown session" in wrong["evidence"][0]["message"]
    asyncio.run(main())


def test_http_firmware_pin_conflict_then_relaxed_plan(http_server):
    async def main():
        async with Client(http_server, read_timeout_seconds=60) as client:
            await firmware_repair_checks(client)
    asyncio.run(main())


def test_http_session_belongs_to_the_connection_that_started_it(http_server, tmp_path):
    """Two real clients: B cannot read or drive A's session, and A's episode is untouched by B's tries."""
    async def main():
        async with Client(http_server, read_timeout_seconds=60) as a, Client(http_server, read_timeout_seconds=60) as b:
            sid = result(await a.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
            for tool, args in (("session_info", {"session": sid}), ("submit", {"session": sid, "payload": RIGHT}),
                               ("submit_logic", {"session": sid, "payload": WRONG})):
                refused = result(await b.call_tool(tool, args))
                assert refused["status"] == "invalid", (tool, refused)
                ev = refused["evidence"][0]
                assert ev["code"] == "E_SESSION_OWNER" and ev["objects"] == [sid] and ev["location"] == "session"
                assert "trace" not in refused and "another MCP connection" in ev["message"]
            info = result(await a.call_tool("session_info", {"session": sid}))
            assert info["proposals_used"] == 0
            assert result(await a.call_tool("submit_logic", {"session": sid, "payload": RIGHT}))["status"] == "pass"
            own = result(await b.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
            assert result(await b.call_tool("session_info", {"session": own}))["proposals_used"] == 0
            assert result(await a.call_tool("session_info", {"session": own}))["evidence"][0]["code"] == \
                "E_SESSION_OWNER"
    asyncio.run(main())


def test_http_bearer_token_and_unsafe_bind(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret-token-0123456789\n")
    refused = subprocess.run([*SERVE, "--http", "--host", "0.0.0.0", "--port", str(free_port())],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "E_UNSAFE_BIND" in refused.stderr and "--token-file" in refused.stderr
    proc, url = start_http(tmp_path, "--token-file", str(token))
    try:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        denied = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10)
        assert denied.status_code == 401 and denied.json()["evidence"][0]["code"] == "E_AUTH"
        wrong = httpx2.post(url, json={}, headers={"Authorization": "Bearer nope"}, timeout=10)
        assert wrong.status_code == 401

        async def main():
            http = create_mcp_http_client(headers={"Authorization": "Bearer s3cret-token-0123456789"})
            async with http, Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as c:
                started = result(await c.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))
                fb = result(await c.call_tool("submit_logic", {"session": started["session"], "payload": RIGHT}))
                assert fb["status"] == "pass"
        asyncio.run(main())
    finally:
        stop(proc)
