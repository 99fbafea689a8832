"""One evaluation episode: a model, an interface, one task, at most ``budget`` model calls.

The loop is the RAC experiment's: the model sees the task prompt and the interface's tools, every call
goes through the metering bridge, every tool call is judged by the interface (the domain's
independent verifier) and answered with a compact feedback message, and the episode stops at the
first pass or when the budget is spent. Whatever the model sends — no tool call, an unknown tool,
arguments that are not JSON, oversized or of the wrong type — becomes a recorded failed proposal
with a stable code; a model that cannot be reached makes the outcome *unknown*. Nothing raises.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from rac_fw.eval.bridge import DEFAULT_CALL_BUDGET, CallRecord, MeteringBridge
from rac_fw.eval.clients import ModelClient, ModelError, ModelOptions, Msg, ToolCall
from rac_fw.eval.interfaces import EpisodeState, Interface, Judged, result_text

#: Longest tool-call argument text judged (larger calls are refused with E_TOOL_ARGUMENTS_SIZE).
MAX_ARGUMENT_CHARS = 256_000


@dataclass
class Proposal:
    """One tool call (or a call without one) and how it was judged."""

    call: int
    tool: str | None
    status: str
    codes: list[str] = field(default_factory=list)
    unknown: bool = False


@dataclass
class EpisodeResult:
    task: str
    seed: int
    outcome: str
    """``pass``, ``fail`` or ``unknown`` (could not be decided: model unreachable, tool missing)."""
    first_pass: bool
    calls: list[CallRecord]
    proposals: list[Proposal]
    wall_ms: float
    judge_ms: float
    labels: dict[str, str]
    error: str | None = None

    @property
    def tokens_in(self) -> int:
        return sum(c.tokens_in for c in self.calls)

    @property
    def tokens_out(self) -> int:
        return sum(c.tokens_out for c in self.calls)

    @property
    def harness_ms(self) -> float:
        """Time spent in the harness itself: neither waiting for the model nor judging."""
        return max(0.0, self.wall_ms - self.judge_ms - sum(c.wall_ms for c in self.calls))

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "harness_ms": self.harness_ms}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> EpisodeResult:
        fields = {k: v for k, v in doc.items() if k not in ("tokens_in", "tokens_out", "harness_ms")}
        fields["calls"] = [CallRecord(**c) for c in doc["calls"]]
        fields["proposals"] = [Proposal(**p) for p in doc["proposals"]]
        return cls(**fields)


def _refusal(call: ToolCall, names: set[str]) -> tuple[str, str] | None:
    """(code, message) when a tool call cannot be judged, else None."""
    if call.name not in names:
        return "E_UNKNOWN_TOOL", f"no tool named {call.name[:60]!r}; the tools are {', '.join(sorted(names))}"
    if len(call.arguments) > MAX_ARGUMENT_CHARS:
        return "E_TOOL_ARGUMENTS_SIZE", f"arguments of {len(call.arguments)} characters exceed {MAX_ARGUMENT_CHARS}"
    try:
        parsed = json.loads(call.arguments or "{}")
    except ValueError as exc:
        return "E_TOOL_ARGUMENTS_JSON", f"the arguments are not JSON: {exc}"
    if not isinstance(parsed, dict):
        return "E_TOOL_ARGUMENTS_TYPE", f"the arguments must be a JSON object, got {type(parsed).__name__}"
    return None


def _error_text(code: str, message: str) -> str:
    return json.dumps({"status": "invalid", "evidence": [{"code": code, "message": message}]})


def _judge(state: EpisodeState, call: ToolCall) -> tuple[Judged | None, str | None]:
    try:
        return state.judge(call.name, json.loads(call.arguments or "{}")), None
    except Exception as exc:  # a verifier bug must end as a recorded, undecided proposal, not a crash
        return None, f"E_JUDGE_ERROR: {type(exc).__name__}: {exc}"


def run_episode(interface: Interface, task: str, client: ModelClient, seed: int = 0,
                budget: int = DEFAULT_CALL_BUDGET, options: ModelOptions | None = None) -> EpisodeResult:
    """Pose ``task`` through ``interface`` to the model behind ``client``; never raises for model behaviour."""
    started = time.perf_counter()
    bridge = MeteringBridge(client, options or ModelOptions(), budget)
    system, user = interface.prompt(task)
    tools = interface.tools(task)
    names = {t.name for t in tools}
    state = interface.start(task, seed, budget)
    messages = [Msg("system", system), Msg("user", user)]
    proposals: list[Proposal] = []
    judge_ms, passed, error = 0.0, False, None
    while bridge.remaining > 0 and not passed:
        index = len(bridge.calls)
        try:
            reply = bridge.call(messages, tools)
        except ModelError as exc:
            error = f"{exc.code}: {exc}"
            break
        # An oversized argument is kept in the conversation only as a placeholder: the model is told it
        # was refused, and later calls are not billed for resending it.
        kept = [c if len(c.arguments) <= MAX_ARGUMENT_CHARS else ToolCall(c.id, c.name[:60], '{"omitted": true}')
                for c in reply.tool_calls]
        messages.append(Msg("assistant", reply.text, kept))
        if not reply.tool_calls:
            proposals.append(Proposal(index, None, "invalid", ["E_NO_TOOL_CALL"]))
            messages.append(Msg("user", f"No tool was called. Submit with one of: {', '.join(sorted(names))}."))
            continue
        for call in reply.tool_calls:
            if passed:
                messages.append(Msg("tool", _error_text("E_ALREADY_PASSED", "the task already passed"),
                                    tool_call_id=call.id))
                continue
            refusal = _refusal(call, names)
            if refusal is not None:
                proposals.append(Proposal(index, call.name[:60], "invalid", [refusal[0]]))
                messages.append(Msg("tool", _error_text(*refusal), tool_call_id=call.id))
                continue
            t0 = time.perf_counter()
            judged, crash = _judge(state, call)
            judge_ms += (time.perf_counter() - t0) * 1e3
            if judged is None:
                proposals.append(Proposal(index, call.name, "undecided", ["E_JUDGE_ERROR"], unknown=True))
                messages.append(Msg("tool", _error_text("E_JUDGE_ERROR", crash or ""), tool_call_id=call.id))
                continue
            fb = judged.feedback
            proposals.append(Proposal(index, call.name, fb.status.value, sorted({e.code for e in fb.evidence}),
                                      judged.unknown))
            messages.append(Msg("tool", result_text(fb), tool_call_id=call.id))
            passed = judged.passed
    judged_any_unknown = any(p.unknown for p in proposals)
    outcome = "pass" if passed else ("unknown" if error is not None or judged_any_unknown else "fail")
    first = next((p for p in proposals if p.call == 0), None)
    return EpisodeResult(
        task=task, seed=seed, outcome=outcome,
        first_pass=first is not None and first.status == "pass" and not first.unknown,
        calls=list(bridge.calls), proposals=proposals, wall_ms=(time.perf_counter() - started) * 1e3,
        judge_ms=judge_ms, labels=interface.labels(task), error=error)
