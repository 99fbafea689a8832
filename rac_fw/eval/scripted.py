"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and calibration.

It is a real HTTP server (``POST /v1/chat/completions``), so the harness under test runs its real
client, bridge and episode loop against it. The request's ``model`` picks the agent:

* ``oracle`` — submits the interface's reference action at once;
* ``repairing`` — submits the interface's flawed action first, then applies the first relaxation patch
  of every evidence item in the last tool result to its previous arguments (falling back to the
  reference when the evidence carries no patch, as for hand-written C);
* ``hostile`` — cycles through malformed arguments, an unknown tool, oversized arguments, a non-object
  and a reply with no tool call at all;
* ``several`` — puts three proposals in every reply (first call: the flawed action, then the reference
  twice; later calls: the reference, the reference, the flawed action), preceded by a schema lookup where
  the interface offers one: under the proposal rule only the first proposal of each reply is judged.

The task comes from the ``task: ID`` line of the first user message; the turn from how many assistant
messages the conversation already holds, so the server keeps no state between requests. The same
agents answer Anthropic Messages requests (``POST /v1/messages``), so both clients are exercised over
HTTP; ``transient_failures`` makes the first N requests answer 429/503 to exercise the clients' retries;
``latency_s=(low, high)`` delays every answer by a time drawn from that range (deterministic per request
body), as a hosted model takes seconds, for the executor benchmark.

Usage is reported as a provider would, counted the way the metering bridge counts when a provider
reports none: the o200k tokens of the request body exactly as received, and of the reply's text and
tool calls (the hostile agent reports no usage, so the bridge's own count is exercised). Every request
is logged in ``ScriptedServer.requests`` (agent, tokens in, tokens of the tool definitions) so tests
measure what a model would be sent.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rac_fw.contract import PatchError, apply_patch
from rac_fw.eval.bridge import produced_text
from rac_fw.eval.interfaces import Interface, ScriptedAction
from rac_fw.metering import measure

AGENTS = ("oracle", "repairing", "hostile", "several")
#: Requests kept in ``ScriptedServer.requests`` (the oldest are dropped beyond it).
MAX_LOGGED = 10_000
_TASK_LINE = re.compile(r"^task: (\S+)$", re.M)
MAX_REQUEST_BYTES = 64 << 20


def _call(name: str, arguments: str, index: int) -> dict[str, Any]:
    return {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}


def _repair(previous: dict[str, Any], result: dict[str, Any]) -> dict[str, Any] | None:
    patched, applied = previous, False
    for evidence in result.get("evidence") or []:
        relaxations = evidence.get("relaxations") or []
        if relaxations and relaxations[0].get("patch"):
            try:
                patched = apply_patch(patched, relaxations[0]["patch"])
                applied = True
            except PatchError:
                continue
    return patched if applied else None


@dataclass(frozen=True)
class RequestRecord:
    """One request the server answered: which agent, o200k tokens of the body and of its tool definitions."""

    agent: str
    tokens_in: int
    tool_tokens: int
    body: str | None = None
    """The request body as received (kept only when the server was asked to keep bodies)."""


class ScriptedAgents:
    """Decides the next assistant message of each agent from the conversation so far."""

    def __init__(self, interface: Interface):
        self.interface = interface

    def reply(self, agent: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        found = _TASK_LINE.search(first_user)
        if found is None:
            return {"role": "assistant", "content": "no `task: ID` line in the first user message"}
        task = found.group(1)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if agent == "oracle":
            return self._submit(self.interface.reference_at(task, turn), turn)
        if agent == "repairing":
            return self._submit(self._repairing(task, messages, turn), turn)
        if agent == "several":
            return self._several(task, tools, turn)
        return self._hostile(tools, turn)

    def _several(self, task: str, tools: list[dict[str, Any]], turn: int) -> dict[str, Any]:
        flawed, right = self.interface.flawed(task), self.interface.reference_at(task, turn)
        order = [flawed, right, right] if turn == 0 else [right, right, flawed]
        calls = [_call(a.tool, json.dumps(a.arguments), 10 * turn + i) for i, a in enumerate(order)]
        if any(t.get("function", {}).get("name") == "schema" for t in tools):
            calls.insert(0, _call("schema", json.dumps({"part": "resources"}), 10 * turn + 9))
        return {"role": "assistant", "content": None, "tool_calls": calls}

    def _repairing(self, task: str, messages: list[dict[str, Any]], turn: int) -> ScriptedAction:
        if turn == 0:
            return self.interface.flawed(task)
        last_call = next((m["tool_calls"][0] for m in reversed(messages)
                          if m.get("role") == "assistant" and m.get("tool_calls")), None)
        last_result = next((m for m in reversed(messages) if m.get("role") == "tool"), None)
        if last_call is not None and last_result is not None:
            try:
                previous = json.loads(last_call["function"]["arguments"])
                repaired = _repair(previous, json.loads(last_result.get("content") or "{}"))
            except (ValueError, KeyError, TypeError):
                repaired = None
            if repaired is not None:
                return ScriptedAction(last_call["function"]["name"], repaired)
        return self.interface.reference(task)

    @staticmethod
    def _submit(action: ScriptedAction, turn: int) -> dict[str, Any]:
        return {"role": "assistant", "content": None,
                "tool_calls": [_call(action.tool, json.dumps(action.arguments), turn)]}

    @staticmethod
    def _hostile(tools: list[dict[str, Any]], turn: int) -> dict[str, Any]:
        name = tools[0]["function"]["name"] if tools else "submit_action"
        moves: list[Callable[[], dict[str, Any]]] = [
            lambda: {"tool_calls": [_call(name, '{"outputs": [1, 2', turn)]},
            lambda: {"tool_calls": [_call("rm_rf_everything", "{}", turn)]},
            lambda: {"tool_calls": [_call(name, json.dumps({"blob": "A" * 300_000}), turn)]},
            lambda: {"tool_calls": [_call(name, "[1, 2, 3]", turn)]},
            lambda: {"content": "I refuse to call a tool."},
        ]
        return {"role": "assistant", "content": None, **moves[turn % len(moves)]()}


def _from_anthropic(request: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An Anthropic Messages request as chat-completions messages and tools (what the agents read)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": request.get("system", "")}]
    for m in request["messages"]:
        content = m["content"]
        if isinstance(content, str):
            messages.append({"role": m["role"], "content": content})
            continue
        calls = [_call(b["name"], json.dumps(b.get("input", {})), i) for i, b in enumerate(content)
                 if b.get("type") == "tool_use"]
        if m["role"] == "assistant":
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for b in content:
            if b.get("type") == "tool_result":
                messages.append({"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": b.get("content")})
            elif b.get("type") == "text" and m["role"] == "user":
                messages.append({"role": "user", "content": b.get("text", "")})
    tools = [{"type": "function", "function": {"name": t["name"], "parameters": t.get("input_schema", {})}}
             for t in request.get("tools") or []]
    return messages, tools


def _to_anthropic(message: dict[str, Any], agent: str, usage: dict[str, int] | None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        try:
            arguments = json.loads(call["function"]["arguments"])
        except ValueError:
            arguments = {"unparsed": call["function"]["arguments"]}
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                       "input": arguments if isinstance(arguments, dict) else {"value": arguments}})
    doc: dict[str, Any] = {"id": "scripted", "type": "message", "role": "assistant", "model": agent,
                           "content": blocks, "stop_reason": "tool_use"}
    if usage is not None:
        doc["usage"] = {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]}
    return doc


def _delay(body: str, latency_s: tuple[float, float]) -> float:
    """A time in ``latency_s`` picked by the request body's hash (the same request waits the same)."""
    low, high = latency_s
    fraction = int.from_bytes(hashlib.sha256(body.encode()).digest()[:4], "big") / 2**32
    return low + (high - low) * fraction


def _handler(agents: ScriptedAgents, failures: list[int], log: list[RequestRecord],
             keep_bodies: bool, latency_s: tuple[float, float]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read results, not logs
            return

        def _answer(self, code: int, doc: dict[str, Any]) -> None:
            body = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            anthropic = self.path.rstrip("/") == "/v1/messages"
            if not anthropic and self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._answer(404, {"error": {"message": f"no endpoint {self.path}"}})
                return
            with lock:
                transient = failures[0] > 0
                failures[0] -= transient
            if transient:
                self.send_response(429 if failures[0] % 2 else 503)
                self.send_header("retry-after", "0")
                self.send_header("content-length", "0")
                self.end_headers()
                return
            length = int(self.headers.get("content-length") or 0)
            if not 0 < length <= MAX_REQUEST_BYTES:
                self._answer(413, {"error": {"message": "request body missing or too large"}})
                return
            try:
                body = self.rfile.read(length).decode("utf-8")
                request = json.loads(body)
                agent = str(request["model"])
                if anthropic:
                    messages, tools = _from_anthropic(request)
                else:
                    messages, tools = list(request["messages"]), list(request.get("tools") or [])
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                self._answer(400, {"error": {"message": f"bad request: {exc}"}})
                return
            if agent not in AGENTS:
                self._answer(404, {"error": {"message": f"no scripted agent {agent!r}; agents: {', '.join(AGENTS)}"}})
                return
            message = agents.reply(agent, messages, tools)
            if latency_s[1] > 0:
                time.sleep(_delay(body, latency_s))
            tokens_in = measure(body)[1]
            with lock:
                log.append(RequestRecord(agent, tokens_in, measure(json.dumps(request.get("tools") or []))[1],
                                         body if keep_bodies else None))
                del log[:-MAX_LOGGED]
            usage = None
            if agent != "hostile":  # the hostile agent reports no usage: the bridge then counts o200k tokens
                produced = produced_text(message.get("content") or "", [
                    (c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []])
                usage = {"prompt_tokens": tokens_in, "completion_tokens": measure(produced)[1]}
            if anthropic:
                self._answer(200, _to_anthropic(message, agent, usage))
                return
            doc: dict[str, Any] = {"id": "scripted", "object": "chat.completion", "model": agent,
                                   "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
            if usage is not None:
                doc["usage"] = usage
            self._answer(200, doc)

    lock = threading.Lock()
    return Handler


class ScriptedServer:
    """The server in a background thread; ``base_url`` is what the OpenAI client is given."""

    def __init__(self, interface: Interface, transient_failures: int = 0, keep_bodies: bool = False,
                 latency_s: tuple[float, float] = (0.0, 0.0)):
        self.requests: list[RequestRecord] = []
        self._failures = [transient_failures]
        handler = _handler(ScriptedAgents(interface), self._failures, self.requests, keep_bodies, latency_s)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="scripted-llm", daemon=True)

    def fail_next(self, requests: int) -> None:
        """Answer the next ``requests`` requests with 429/503 (a provider that is down for a while)."""
        self._failures[0] = requests

    @property
    def base_url(self) -> str:
        """For the OpenAI-compatible client (``…/v1``)."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """For the Anthropic client (it appends ``/v1/messages``)."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
