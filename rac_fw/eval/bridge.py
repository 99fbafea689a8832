"""The metering bridge: every model call of an episode passes through here, whichever client is used.

It enforces the call budget (default 5, the RAC experiment's), and records per call the input and
output tokens — the provider's usage when it reports one, else ``o200k_base`` counts of what was sent
and received (:mod:`rac_fw.metering`) — and the wall time of the call. The records are what the
store keeps and the report sums.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

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


class BudgetSpent(RuntimeError):
    """The episode asked for more model calls than its budget."""


def _prompt_text(messages: list[Msg], tools: list[ToolSpec]) -> str:
    return json.dumps({"messages": [asdict(m) for m in messages], "tools": [asdict(t) for t in tools]})


@dataclass
class MeteringBridge:
    client: ModelClient
    options: ModelOptions = field(default_factory=ModelOptions)
    budget: int = DEFAULT_CALL_BUDGET
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return self.budget - len(self.calls)

    def call(self, messages: list[Msg], tools: list[ToolSpec]) -> ModelReply:
        """One model call, metered; raises ``BudgetSpent`` past the budget, ``ModelError`` when it fails."""
        if self.remaining <= 0:
            raise BudgetSpent(f"model-call budget of {self.budget} spent")
        started = time.perf_counter()
        try:
            reply = self.client.complete(messages, tools, self.options)
        except ModelError as exc:
            wall = (time.perf_counter() - started) * 1e3
            sent = measure(_prompt_text(messages, tools))[1]
            self.calls.append(CallRecord(len(self.calls), sent, 0, "o200k", wall, f"{exc.code}: {exc}"))
            raise
        wall = (time.perf_counter() - started) * 1e3
        if reply.usage is not None:
            tokens_in, tokens_out, source = reply.usage.input_tokens, reply.usage.output_tokens, "provider"
        else:
            produced = reply.text + "".join(c.name + c.arguments for c in reply.tool_calls)
            tokens_in, tokens_out = measure(_prompt_text(messages, tools))[1], measure(produced)[1]
            source = "o200k"
        self.calls.append(CallRecord(len(self.calls), tokens_in, tokens_out, source, wall))
        return reply
