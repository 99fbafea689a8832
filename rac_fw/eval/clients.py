"""Model clients with native tool calling: OpenAI-compatible chat completions and Anthropic Messages.

Both speak plain HTTP (``urllib``), so any OpenAI-compatible server works — vLLM, Ollama, llama.cpp's
server, hosted providers — without a vendor SDK. Messages are kept in one neutral shape (:class:`Msg`)
and converted per provider. Transient failures (429, 5xx, a dropped connection) are retried a bounded
number of times with exponential backoff (``Retry-After`` honoured up to a cap); anything else is a
:class:`ModelError` with a stable code, which the episode records as an *unknown* outcome.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["system", "user", "assistant", "tool"]

#: Longest wait honoured from a ``Retry-After`` header, seconds.
MAX_RETRY_AFTER_S = 30.0


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: name, what it does, and the JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model produced it; ``arguments`` is the raw JSON text (it may be malformed)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int


@dataclass
class Msg:
    """A conversation message in neutral form (converted to each provider's wire shape)."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass(frozen=True)
class ModelReply:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage | None
    """Token counts the provider reported (None when it reported none)."""


@dataclass(frozen=True)
class ModelOptions:
    """Sampling and transport options shared by every client."""

    temperature: float | None = None
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    max_tokens: int = 4096
    timeout_s: float = 120.0
    retries: int = 3
    backoff_s: float = 1.0


class ModelError(RuntimeError):
    """A model call that failed for good: ``code`` is E_MODEL_HTTP, E_MODEL_NETWORK or E_MODEL_RESPONSE."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class ModelClient(Protocol):
    """What the metering bridge calls; ``name`` is recorded with every run.

    ``request_body`` is the exact JSON text ``complete`` sends for these messages and tools (the bridge
    counts its tokens when the provider reports no usage), ``wire_tools`` the tool definitions in it.
    """

    name: str

    def complete(self, messages: list[Msg], tools: list[ToolSpec], options: ModelOptions) -> ModelReply: ...

    def request_body(self, messages: list[Msg], tools: list[ToolSpec], options: ModelOptions) -> str: ...

    @staticmethod
    def wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]: ...


def _post(url: str, body: str, headers: dict[str, str], options: ModelOptions) -> dict[str, Any]:
    """POST a JSON text with bounded retries on 429/5xx and network errors; the decoded JSON answer."""
    data = body.encode()
    attempt = 0
    while True:
        request = urllib.request.Request(url, data=data, method="POST",
                                         headers={"content-type": "application/json", **headers})
        wait = options.backoff_s * (2**attempt)
        try:
            with urllib.request.urlopen(request, timeout=options.timeout_s) as response:
                raw = response.read()
            break
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode(errors="replace")
            if exc.code != 429 and exc.code < 500 or attempt >= options.retries:
                raise ModelError("E_MODEL_HTTP", f"{url} answered HTTP {exc.code}: {detail}") from None
            after = exc.headers.get("retry-after") if exc.headers else None
            if after is not None and after.replace(".", "", 1).isdigit():
                wait = min(float(after), MAX_RETRY_AFTER_S)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            if attempt >= options.retries:
                raise ModelError("E_MODEL_NETWORK", f"{url}: {getattr(exc, 'reason', exc)}") from None
        attempt += 1
        time.sleep(wait)
    try:
        answer = json.loads(raw)
    except ValueError:
        raise ModelError("E_MODEL_RESPONSE", f"{url} did not answer JSON: {raw[:120]!r}") from None
    if not isinstance(answer, dict):
        raise ModelError("E_MODEL_RESPONSE", f"{url} answered {type(answer).__name__}, not an object")
    return answer


def _key(env: str | None) -> str | None:
    if env is None:
        return None
    value = os.environ.get(env)
    if not value:
        raise ModelError("E_MODEL_KEY", f"environment variable {env} (the API key) is not set")
    return value


class OpenAIChatClient:
    """``POST {base_url}/chat/completions`` with ``tools`` (function calling)."""

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1", api_key_env: str | None = None):
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.name = f"openai:{model}"

    @staticmethod
    def wire_messages(messages: list[Msg]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "tool":
                out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            elif m.role == "assistant" and m.tool_calls:
                out.append({"role": "assistant", "content": m.content or None, "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls]})
            else:
                out.append({"role": m.role, "content": m.content})
        return out

    @staticmethod
    def wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.parameters}} for t in tools]

    def request_body(self, messages: list[Msg], tools: list[ToolSpec], options: ModelOptions) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": self.wire_messages(messages),
                                "max_tokens": options.max_tokens, "tools": self.wire_tools(tools)}
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.reasoning_effort is not None:
            body["reasoning_effort"] = options.reasoning_effort
        return json.dumps(body)

    def complete(self, messages: list[Msg], tools: list[ToolSpec], options: ModelOptions) -> ModelReply:
        body = self.request_body(messages, tools, options)
        key = _key(self.api_key_env)
        answer = _post(f"{self.base_url}/chat/completions", body,
                       {"authorization": f"Bearer {key}"} if key else {}, options)
        try:
            message = answer["choices"][0]["message"]
            calls = [ToolCall(str(c.get("id") or f"call_{i}"), str(c["function"]["name"]),
                              c["function"].get("arguments") if isinstance(c["function"].get("arguments"), str)
                              else json.dumps(c["function"].get("arguments")))
                     for i, c in enumerate(message.get("tool_calls") or [])]
        except (KeyError, IndexError, TypeError) as exc:
            raise ModelError("E_MODEL_RESPONSE", f"unexpected chat-completions answer (missing {exc})") from None
        usage = answer.get("usage") or {}
        tokens = (Usage(int(usage["prompt_tokens"]), int(usage.get("completion_tokens", 0)))
                  if isinstance(usage, dict) and "prompt_tokens" in usage else None)
        return ModelReply(text=message.get("content") or "", tool_calls=calls, usage=tokens)


#: Thinking budgets the Anthropic client uses for each reasoning effort.
THINKING_BUDGET = {"low": 1024, "medium": 4096, "high": 16384}


class AnthropicClient:
    """``POST {base_url}/v1/messages`` (Anthropic Messages API, tool use)."""

    def __init__(self, model: str, base_url: str = "https://api.anthropic.com",
                 api_key_env: str | None = "ANTHROPIC_API_KEY"):
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.name = f"anthropic:{model}"

    @staticmethod
    def wire_messages(messages: list[Msg]) -> tuple[str, list[dict[str, Any]]]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "system":
                continue
            if m.role == "tool":
                block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
                if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                    out[-1]["content"].append(block)
                else:
                    out.append({"role": "user", "content": [block]})
            elif m.role == "assistant":
                blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
                for c in m.tool_calls:
                    try:
                        parsed = json.loads(c.arguments)
                    except ValueError:
                        parsed = {}
                    blocks.append({"type": "tool_use", "id": c.id, "name": c.name,
                                   "input": parsed if isinstance(parsed, dict) else {}})
                out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
            else:
                out.append({"role": "user", "content": m.content})
        return system, out

    @staticmethod
    def wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
        return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]

    def request_body(self, messages: list[Msg], tools: list[ToolSpec], options: ModelOptions) -> str:
        system, wire = self.wire_messages(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": options.max_tokens, "system": system,
                                "messages": wire, "tools": self.wire_tools(tools)}
        if options.reasoning_effort is not None:
            budget = THINKING_BUDGET[options.reasoning_effort]
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = max(options.max_tokens, budget + 1024)
        elif options.temperature is not None:
            body["temperature"] = options.temperature
        return json.dumps(body)

    def complete(self, messages: list[Msg], tools: list[ToolSpec], options: ModelOptions) -> ModelReply:
        body = self.request_body(messages, tools, options)
        key = _key(self.api_key_env)
        headers = {"anthropic-version": "2023-06-01", **({"x-api-key": key} if key else {})}
        answer = _post(f"{self.base_url}/v1/messages", body, headers, options)
        blocks = answer.get("content")
        if not isinstance(blocks, list):
            raise ModelError("E_MODEL_RESPONSE", "unexpected Messages answer (no content list)")
        text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        calls = [ToolCall(str(b.get("id")), str(b.get("name")), json.dumps(b.get("input", {})))
                 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        usage = answer.get("usage") or {}
        tokens = (Usage(int(usage["input_tokens"]), int(usage.get("output_tokens", 0)))
                  if isinstance(usage, dict) and "input_tokens" in usage else None)
        return ModelReply(text=text, tool_calls=calls, usage=tokens)
