"""One evaluation episode: a model, an interface, one task, at most ``budget`` model calls.

The loop is the RAC experiment's, under one proposal rule for every interface (``docs/INTERFACES.md``):
the budget is model calls; each model call yields at most one *proposal* — the first tool call of the
reply that is not a lookup — which the interface judges with the domain's independent verifier and
answers with a compact feedback message; further proposing tool calls in the same reply are answered
``E_ONE_ACTION_PER_CALL`` without being judged (counted in ``extra_calls``); lookup calls (reading a
schema) are answered and never judged. The episode stops at the first accepted proposal or when the
budget is spent. Whatever the model sends — no tool call, an unknown tool, arguments that are not
JSON, oversized or of the wrong type — becomes a recorded failed proposal with a stable code; a model
that cannot be reached makes the outcome *unknown*. Nothing raises.

Where the interface grades accepted proposals (scheduling: makespan ≤ 1.25 × the known optimum), an
accepted proposal that misses the bar still ends the episode — the verifier said pass — but the
outcome is ``fail``; the measurements (makespan, gap) are stored with the episode.
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

ONE_ACTION = "E_ONE_ACTION_PER_CALL"


@dataclass
class Proposal:
    """One proposal (the judged tool call of a model call, or a reply without one) and how it was judged."""

    call: int
    tool: str | None
    status: str
    codes: list[str] = field(default_factory=list)
    unknown: bool = False
    quality: bool | None = None
    """For an accepted proposal of a domain with a quality bar: whether it reached it (None: no bar)."""
    metrics: dict[str, float] = field(default_factory=dict)
    """The quality measurements (scheduling: makespan, optimum, gap)."""
    constraints: tuple[int, int] = (0, 0)
    """(held, total) of the task's constraints on this proposal (the CPR's ingredients)."""

    @property
    def passed(self) -> bool:
        return self.status == "pass" and not self.unknown and self.quality is not False


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
    valid: bool = False
    """The verifier accepted a proposal (for a domain with a quality bar, the pass also needs the bar)."""
    first_valid: bool = False
    metrics: dict[str, float] = field(default_factory=dict)
    """The quality measurements of the accepted proposal (scheduling: makespan, optimum, gap)."""
    extra_calls: int = 0
    """Proposing tool calls answered E_ONE_ACTION_PER_CALL (a reply held more than one)."""
    lookups: int = 0
    """Lookup calls answered (schema reads), which are never proposals."""

    @property
    def constraint_rate(self) -> float | None:
        """Share of the task's constraints held by the last judged proposal (None: nothing was judged)."""
        judged = [p for p in self.proposals if p.constraints[1]]
        return judged[-1].constraints[0] / judged[-1].constraints[1] if judged else None

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
        fields["proposals"] = [Proposal(**{**p, "constraints": tuple(p.get("constraints", (0, 0)))})
                               for p in doc["proposals"]]
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


def _propose(interface: Interface, task: str, state: EpisodeState, call: ToolCall, names: set[str],
             index: int) -> tuple[Proposal, str, float]:
    """Judge the one proposal of a model call: (the proposal, the tool result text, ms spent judging)."""
    refusal = _refusal(call, names)
    if refusal is not None:
        return Proposal(index, call.name[:60], "invalid", [refusal[0]]), _error_text(*refusal), 0.0
    t0 = time.perf_counter()
    judged, crash = _judge(state, call)
    spent = (time.perf_counter() - t0) * 1e3
    if judged is None:
        proposal = Proposal(index, call.name, "undecided", ["E_JUDGE_ERROR"], unknown=True)
        return proposal, _error_text("E_JUDGE_ERROR", crash or ""), spent
    fb = judged.feedback
    proposal = Proposal(index, call.name, fb.status.value, sorted({e.code for e in fb.evidence}), judged.unknown,
                        constraints=interface.constraints(fb))
    if judged.passed:
        graded = interface.quality(task, fb)
        if graded is not None:
            proposal.quality, proposal.metrics = graded.passed, dict(graded.metrics)
    return proposal, result_text(fb), spent


def _lookup(interface: Interface, task: str, call: ToolCall) -> str:
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError as exc:
        return _error_text("E_TOOL_ARGUMENTS_JSON", f"the arguments are not JSON: {exc}")
    if not isinstance(arguments, dict):
        return _error_text("E_TOOL_ARGUMENTS_TYPE", "the arguments must be a JSON object")
    return interface.lookup(task, call.name, arguments)


def run_episode(interface: Interface, task: str, client: ModelClient, seed: int = 0,
                budget: int = DEFAULT_CALL_BUDGET, options: ModelOptions | None = None) -> EpisodeResult:
    """Pose ``task`` through ``interface`` to the model behind ``client``; never raises for model behaviour."""
    started = time.perf_counter()
    bridge = MeteringBridge(client, options or ModelOptions(), budget)
    system, user = interface.prompt(task)
    proposing = interface.tools(task)
    lookups = {t.name for t in interface.lookup_tools(task)}
    tools = [*proposing, *interface.lookup_tools(task)]
    names = {t.name for t in proposing}
    state = interface.start(task, seed, budget)
    messages = [Msg("system", system), Msg("user", user)]
    proposals: list[Proposal] = []
    judge_ms, accepted, error, extra, looked = 0.0, False, None, 0, 0
    while bridge.remaining > 0 and not accepted:
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
        proposed = False
        for call in reply.tool_calls:
            if call.name in lookups and len(call.arguments) <= MAX_ARGUMENT_CHARS:
                looked += 1
                messages.append(Msg("tool", _lookup(interface, task, call), tool_call_id=call.id))
            elif proposed:
                extra += 1
                messages.append(Msg("tool", _error_text(ONE_ACTION, "one action per model call: only the first "
                                                        "proposal of this reply was judged; this one was not"),
                                    tool_call_id=call.id))
            else:
                proposed = True
                proposal, text, spent = _propose(interface, task, state, call, names, index)
                judge_ms += spent
                proposals.append(proposal)
                messages.append(Msg("tool", text, tool_call_id=call.id))
                accepted = proposal.status == "pass" and not proposal.unknown
    last = proposals[-1] if proposals else None
    passed = last is not None and last.passed
    outcome = "pass" if passed else ("unknown" if error is not None or any(p.unknown for p in proposals) else "fail")
    first = proposals[0] if proposals else None
    return EpisodeResult(
        task=task, seed=seed, outcome=outcome, first_pass=first is not None and first.passed,
        calls=list(bridge.calls), proposals=proposals, wall_ms=(time.perf_counter() - started) * 1e3,
        judge_ms=judge_ms, labels=interface.labels(task), error=error, valid=accepted,
        first_valid=first is not None and first.status == "pass" and not first.unknown,
        metrics=dict(last.metrics) if accepted and last is not None else {}, extra_calls=extra, lookups=looked)
