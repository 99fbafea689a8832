"""The MCP server's bounds (issue 27), driven by the SDK's real client over stdio and raw HTTP on loopback:
which files `observe` may read, per-client caps on open episodes and on proposals per task, idle sessions,
a session replayed from another credential, and payloads past the token counter's reach."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from test_mcp import RIGHT, WRONG, result, start_http, stdio_client, stop

#: A 2-job, 2-machine JSPLIB instance (standard format).
INSTANCE = "2 2\n0 3 1 2\n1 2 0 4\n"


def _evidence(body: dict[str, Any]) -> dict[str, Any]:
    assert body["status"] == "invalid", body
    return body["evidence"][0]


def test_mcp_observe_paths_are_confined_to_the_task_dir(tmp_path: Path) -> None:
    """Issue 27: observe("scheduling", PATH) read any file the server could. Now a task is a catalogue id, or
    a file inside the operator's --task-dir (symlinks resolved first) no larger than task_file_bytes."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "tiny.txt").write_text(INSTANCE)
    (tasks / "big.txt").write_text(INSTANCE + "\n" * 2000)
    outside = tmp_path / "outside.txt"
    outside.write_text(INSTANCE)
    (tasks / "link.txt").symlink_to(outside)

    async def main() -> None:
        async with stdio_client(tmp_path / "a", 3) as client:  # no --task-dir: catalogue ids only
            for path in (str(outside), "/etc/passwd", "../../etc/passwd"):
                for tool in ("observe", "start_episode"):
                    ev = _evidence(result(await client.call_tool(tool, {"domain": "scheduling", "task": path})))
                    assert ev["code"] == "E_UNKNOWN_TASK" and "--task-dir" in ev["message"], ev
            assert result(await client.call_tool("observe", {"domain": "scheduling", "task": "la01"}))["task"] == "la01"
        async with stdio_client(tmp_path / "b", 3, "--task-dir", str(tasks), "--limit", "task_file_bytes=1000") as c:
            seen = result(await c.call_tool("observe", {"domain": "scheduling", "task": "tiny.txt"}))
            assert seen["data"]["num_jobs"] == 2, seen
            started = result(await c.call_tool("start_episode", {"domain": "scheduling", "task": "tiny.txt"}))
            assert started["budget"] == 3
            for path in ("link.txt", "../outside.txt", str(outside)):
                ev = _evidence(result(await c.call_tool("observe", {"domain": "scheduling", "task": path})))
                assert ev["code"] == "E_UNKNOWN_TASK", (path, ev)
            ev = _evidence(result(await c.call_tool("observe", {"domain": "scheduling", "task": "big.txt"})))
            assert ev["code"] == "E_TOO_LARGE" and ev["objects"] == ["task_file_bytes"]
    asyncio.run(main())


def test_mcp_episode_and_proposal_caps_per_client(tmp_path: Path) -> None:
    """Issue 27: each episode got a fresh budget and episodes were uncapped, so the budget bounded nothing.
    Now a client holds at most open_episodes unfinished episodes and makes at most task_proposals proposals
    on one task over all its episodes; refusals spend nothing."""
    async def main() -> None:
        async with stdio_client(tmp_path, 2, "--limit", "open_episodes=2,task_proposals=3") as client:
            start = {"domain": "logic", "task": "half_adder"}
            a = result(await client.call_tool("start_episode", start))["session"]
            b = result(await client.call_tool("start_episode", {"domain": "logic", "task": "full_adder"}))["session"]
            ev = _evidence(result(await client.call_tool("start_episode", start)))
            assert ev["code"] == "E_TOO_LARGE" and ev["objects"] == ["open_episodes"], ev
            for _ in range(2):  # a spends its budget of 2: the episode ends, a slot frees
                assert result(await client.call_tool("submit_logic", {"session": a, "payload": WRONG}))["status"] \
                    == "fail"
            c = result(await client.call_tool("start_episode", start))["session"]  # same task, fresh budget of 2...
            assert result(await client.call_tool("submit_logic", {"session": c, "payload": WRONG}))["status"] == "fail"
            ev = _evidence(result(await client.call_tool("submit_logic", {"session": c, "payload": RIGHT})))
            assert ev["code"] == "E_TOO_LARGE" and ev["objects"] == ["task_proposals"], ev  # ...but 3 per task
            assert "half_adder" in ev["message"]
            assert result(await client.call_tool("session_info", {"session": c}))["proposals_used"] == 1
            judged = result(await client.call_tool("submit", {"session": b, "payload": WRONG}))
            assert "task_proposals" not in json.dumps(judged)  # another task has its own count
    asyncio.run(main())


def test_mcp_idle_sessions_are_closed(tmp_path: Path) -> None:
    async def main() -> None:
        async with stdio_client(tmp_path, 2, "--limit", "session_idle_seconds=1") as client:
            sid = result(await client.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))["session"]
            assert result(await client.call_tool("session_info", {"session": sid}))["proposals_used"] == 0
            time.sleep(1.5)
            ev = _evidence(result(await client.call_tool("session_info", {"session": sid})))
            assert ev["code"] == "E_UNKNOWN_OBJECT" and "unused for 1 s is closed" in ev["message"], ev
            assert (tmp_path / sid / "trace.jsonl").exists() or (tmp_path / sid).is_dir()  # kept on disk
    asyncio.run(main())


class RawMcp:
    """MCP over streamable HTTP by hand (httpx2), so a test can send any header a client could."""

    def __init__(self, url: str, token: str | None):
        self.url, self.token, self.session, self.ids = url, token, None, 0

    def headers(self, session: str | None = None, token: str | None = None) -> dict[str, str]:
        out = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "mcp-protocol-version": "2025-06-18"}
        if token or self.token:
            out["Authorization"] = f"Bearer {token or self.token}"
        if session or self.session:
            out["mcp-session-id"] = session or self.session or ""
        return out

    def post(self, body: dict[str, Any], **headers: Any) -> httpx2.Response:
        return httpx2.post(self.url, json=body, headers=self.headers(**headers), timeout=60)

    def open(self) -> None:
        answer = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        assert answer.status_code == 200, answer.text
        self.session = answer.headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict[str, Any], **headers: Any) -> tuple[int, dict[str, Any]]:
        self.ids += 1
        answer = self.post({"jsonrpc": "2.0", "id": self.ids, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}}, **headers)
        if answer.status_code != 200:
            return answer.status_code, answer.json()
        text = answer.text
        if answer.headers.get("content-type", "").startswith("text/event-stream"):
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        body = json.loads(text)["result"]
        return 200, body.get("structuredContent") or json.loads(body["content"][0]["text"])


def test_mcp_session_replay_from_another_credential_fails(tmp_path: Path) -> None:
    """Issue 27: replaying a client's mcp-session-id from another connection drove that session. With one
    token per client, the id is bound to the credential that opened it: another credential replaying it is
    refused (403) before the SDK routes it, a forged x-rac-fw-client header changes nothing, and the rac-fw
    session id named from another client's own connection is E_SESSION_OWNER."""
    tokens = tmp_path / "tokens"
    tokens.write_text("# one line per client\nalice alice-token-0123456789\nbob bob-token-0123456789ab\n")
    proc, url = start_http(tmp_path, "--token-file", str(tokens))
    try:
        alice = RawMcp(url, "alice-token-0123456789")
        alice.open()
        status, started = alice.call("start_episode", {"domain": "logic", "task": "half_adder"})
        assert status == 200, started
        sid = started["session"]
        status, body = alice.call("submit_logic", {"session": sid, "payload": WRONG}, token="bob-token-0123456789ab")
        assert status == 403 and body["evidence"][0]["code"] == "E_SESSION_OWNER", (status, body)
        spoof = alice.headers(token="bob-token-0123456789ab") | {"x-rac-fw-client": "alice"}
        answer = httpx2.post(url, headers=spoof, timeout=60, json={"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                             "params": {"name": "session_info", "arguments": {"session": sid}}})  # fmt: skip
        assert answer.status_code == 403
        assert httpx2.post(url, json={}, headers=alice.headers(token="nope-nope-nope-nope"), timeout=10).status_code \
            == 401

        async def bob_on_his_own_connection() -> dict[str, Any]:
            http = create_mcp_http_client(headers={"Authorization": "Bearer bob-token-0123456789ab"})
            async with http, Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as bob:
                return result(await bob.call_tool("submit_logic", {"session": sid, "payload": WRONG}))
        ev = _evidence(asyncio.run(bob_on_his_own_connection()))
        assert ev["code"] == "E_SESSION_OWNER" and ev["objects"] == [sid]
        status, info = alice.call("session_info", {"session": sid})
        assert status == 200 and info["proposals_used"] == 0, info  # nobody but alice spent her budget
    finally:
        stop(proc)


def test_mcp_payload_past_the_token_counter_gets_located_evidence(tmp_path: Path) -> None:
    """Issue 27: payloads over ~200 k o200k tokens but under the byte limit crashed the metering
    (E_INTERNAL TokenLimitError) in submit, plan and submit_logic. Now they are refused as E_TOO_LARGE on
    payload_tokens, located at the payload, before a turn runs; special-token text counts as text."""
    many = " ".join(["1"] * 240_000)  # ~480 kB, ~240 k tokens: under payload_bytes, past the counter's chunk
    assert len(many) < 1 << 20

    async def main() -> None:
        async with stdio_client(tmp_path, 3) as client:
            logic = result(await client.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))
            firmware = result(await client.call_tool("start_episode", {"domain": "firmware", "task": "stm32f407"}))
            plan = {"target": "stm32f407", "operations": [{"op": "uart_print", "message": "x"}], "notes": many}
            for tool, args in (("submit_logic", {"session": logic["session"], "payload": {"outputs": {}, "x": many}}),
                               ("submit", {"session": logic["session"], "payload": {"outputs": many}}),
                               ("plan", {"session": firmware["session"], "plan": plan})):
                ev = _evidence(result(await client.call_tool(tool, args)))
                assert ev["code"] == "E_TOO_LARGE" and ev["objects"] == ["payload_tokens"], (tool, ev)
                assert ev["location"] == "payload" and ev["magnitudes"][0]["value"] > 100_000
            special = {"outputs": {"sum": [1, 2], "carry": [3]}, "note": "<|endoftext|>"}
            fb = result(await client.call_tool("submit_logic", {"session": logic["session"], "payload": special}))
            assert fb["status"] in ("pass", "invalid") and "E_INTERNAL" not in json.dumps(fb), fb
            info = result(await client.call_tool("session_info", {"session": logic["session"]}))
            assert info["proposals_used"] == 1  # the refusals spent nothing
    asyncio.run(main())
