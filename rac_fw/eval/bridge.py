"""The metering bridge: every model call of an episode passes through here, whichever client is used.

It enforces the call budget (default 5, the RAC experiment's), and records per call the input and
output tokens — the provider's usage when it reports one, else the ``o200k_base`` count
(:mod:`rac_fw.metering`) of exactly the request body the client sent and of the text and tool calls
it received — the tokens of the tool definitions in that body, and the wall time of the call. The
scripted server counts the same way, so scripted and real runs are comparable. The records are what
the store keeps and the report sums.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from rac_fw.eval.clients import ModelClient, ModelError, ModelOptions, ModelReply, Msg, ToolSpec
from rac_fw.metering import measure

DEFAULT_CALL_BUDGET = 5


@dataclass(frozen=True)
class CallRecord:
    """One metered model call."""

    index: int
    tokens_in: int
    tokens_out: int
    token_source: str
    """``provider`` (usage reported) or ``o200k`` (counted here)."""
    wall_ms: float
    error: str | None = None
    tool_tokens: int = 0
    """o200k tokens of the tool definitions sent with this call (as on the wire)."""


class BudgetSpent(RuntimeError):
    """The episode asked for more model calls than its budget."""


def produced_text(text: str, calls: list[tuple[str, str]]) -> str:
    """What a reply produced, as counted when no usage is reported: its text, then each call's name and
    arguments (the scripted server counts its replies with this too)."""
    return text + "".join(name + arguments for name, arguments in calls)


@dataclass
class MeteringBridge:
    client: ModelClient
    options: ModelOptions = field(default_factory=ModelOptions)
    budget: int = DEFAULT_CALL_BUDGET
    calls: list[CallRecord] = field(default_factory=list)
    _tool_tokens: dict[int, int] = field(default_factory=dict)

    @property
    def remaining(self) -> int:
        return self.budget - len(self.calls)

    def call(self, messages: list[Msg], tools: list[ToolSpec]) -> ModelReply:
        """One model call, metered; raises ``BudgetSpent`` past the budget, ``ModelError`` when it fails."""
        if self.remaining <= 0:
            raise BudgetSpent(f"model-call budget of {self.budget} spent")
        key = id(tools)
        if key not in self._tool_tokens:  # the tool list is one object for the whole episode: count it once
            self._tool_tokens = {key: measure(json.dumps(self.client.wire_tools(tools)))[1]}
        tool_tokens = self._tool_tokens[key]
        started = time.perf_counter()
        try:
            reply = self.client.complete(messages, tools, self.options)
        except ModelError as exc:
            wall = (time.perf_counter() - started) * 1e3
            sent = measure(self.client.request_body(messages, tools, self.options))[1]
            self.calls.append(CallRecord(len(self.calls), sent, 0, "o200k", wall, f"{exc.code}: {exc}", tool_tokens))
            raise
        wall = (time.perf_counter() - started) * 1e3
        if reply.usage is not None:
            tokens_in, tokens_out, source = reply.usage.input_tokens, reply.usage.output_tokens, "provider"
        else:
            produced = produced_text(reply.text, [(c.name, c.arguments) for c in reply.tool_calls])
            tokens_in = measure(self.client.request_body(messages, tools, self.options))[1]
            tokens_out, source = measure(produced)[1], "o200k"
        self.calls.append(CallRecord(len(self.calls), tokens_in, tokens_out, source, wall, None, tool_tokens))
        return reply
