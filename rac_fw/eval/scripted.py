"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and calibration.

It is a real HTTP server (``POST /v1/chat/completions``), so the harness under test runs its real
client, bridge and episode loop against it. The request's ``model`` picks the agent:

* ``oracle`` — submits the interface's reference action at once;
* ``repairing`` — submits the interface's flawed action first, then applies the first relaxation patch
  of every evidence item in the last tool result to its previous arguments (falling back to the
  reference when the evidence carries no patch, as for hand-written C);
* ``hostile`` — cycles through malformed arguments, an unknown tool, oversized arguments, a non-object
  and a reply with no tool call at all.

The task comes from the ``task: ID`` line of the first user message; the turn from how many assistant
messages the conversation already holds, so the server keeps no state between requests.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rac_fw.contract import PatchError, apply_patch
from rac_fw.eval.interfaces import Interface, ScriptedAction
from rac_fw.metering import measure

AGENTS = ("oracle", "repairing", "hostile")
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
            return self._submit(self.interface.reference(task), turn)
        if agent == "repairing":
            return self._submit(self._repairing(task, messages, turn), turn)
        return self._hostile(tools, turn)

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


def _handler(agents: ScriptedAgents) -> type[BaseHTTPRequestHandler]:
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
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._answer(404, {"error": {"message": f"no endpoint {self.path}"}})
                return
            length = int(self.headers.get("content-length") or 0)
            if not 0 < length <= MAX_REQUEST_BYTES:
                self._answer(413, {"error": {"message": "request body missing or too large"}})
                return
            try:
                request = json.loads(self.rfile.read(length))
                agent = str(request["model"])
                messages, tools = list(request["messages"]), list(request.get("tools") or [])
            except (ValueError, KeyError, TypeError) as exc:
                self._answer(400, {"error": {"message": f"bad request: {exc}"}})
                return
            if agent not in AGENTS:
                self._answer(404, {"error": {"message": f"no scripted agent {agent!r}; agents: {', '.join(AGENTS)}"}})
                return
            message = agents.reply(agent, messages, tools)
            doc: dict[str, Any] = {"id": "scripted", "object": "chat.completion", "model": agent,
                                   "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
            if agent != "hostile":  # the hostile agent reports no usage: the bridge then counts o200k tokens
                produced = json.dumps(message.get("tool_calls") or message.get("content") or "")
                doc["usage"] = {"prompt_tokens": measure(json.dumps(messages))[1],
                                "completion_tokens": measure(produced)[1]}
            self._answer(200, doc)

    return Handler


class ScriptedServer:
    """The server in a background thread; ``base_url`` is what the OpenAI client is given."""

    def __init__(self, interface: Interface):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(ScriptedAgents(interface)))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="scripted-llm", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
