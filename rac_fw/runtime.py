"""The turn runtime: orders the five operations, enforces the proposal budget, writes the trace.

One *turn* is ``validate → realize → verify → feedback`` for one proposed action (``observe`` opens
the episode and is re-sent inside feedback). An *episode* is up to ``budget`` proposals and ends at the
first clean pass or when the budget is spent. The trace is a hash chain (:mod:`rac_fw.trace`): a
header, one line per turn, a closing record. ``replay`` checks the chain and the episode's structure,
re-executes every turn and reports divergence in artifact hash, verdicts or serialized feedback.

Budget semantics (docs/PROTOCOL.md): every action the runtime receives is a proposal — pass, fail or
invalid alike it spends one and writes one trace line. A payload over the byte limit is refused before
it becomes one, and a turn its executor stops at a ceiling (the MCP server's memory or time ceiling) is
refused likewise: it spends nothing and is not traced. After the episode ends, a proposal is answered
``closed`` (it passed) or ``budget`` (all proposals spent), never judged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rac_fw.contract import (
    Action,
    Evidence,
    Feedback,
    Observation,
    Status,
    Verdict,
    canonical_json,
)
from rac_fw.domain import Domain, Validation, Verification, load_domain
from rac_fw.limits import LimitExceeded, NumberOutOfRange, check_document, check_size
from rac_fw.metering import check_tokens
from rac_fw.trace import (
    TRACE_FORMAT,
    Finding,
    TraceError,
    TraceWriter,
    check_budget,
    check_structure,
    facts_hash_of,
    signatures,
)

__all__ = ["DEFAULT_BUDGET", "Divergence", "Episode", "Replay", "TraceError", "TurnRecord", "replay", "replay_report",
           "run_turn"]

DEFAULT_BUDGET = 5

#: Measures a serialized message: returns (bytes, tokens). Set by the MCP server for metering.
Meter = Callable[[str], tuple[int, int]]

#: Runs one turn (``run_turn``'s signature): in process by default; the MCP server runs each in a
#: bounded worker process (``rac_fw.mcp.worker``), which raises ``LimitExceeded`` past its ceilings.
TurnExecutor = Callable[[Domain, str, Action, int, int], "TurnRecord"]


def rac_fw_version() -> str:
    try:
        return version("rac-fw")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


@dataclass
class TurnRecord:
    """What one turn produced; ``trace_line`` is its JSON form in the trace file."""

    feedback: Feedback
    timings_ms: dict[str, float]
    action: Action

    def trace_line(self, seed: int, sizes: dict[str, Any] | None = None) -> dict[str, Any]:
        fb = self.feedback
        line: dict[str, Any] = {
            "kind": "turn",
            "turn": fb.turn,
            "domain": fb.domain,
            "task": fb.task,
            "seed": seed,
            "action": self.action.model_dump(mode="json"),
            "status": fb.status.value,
            "artifact_hash": fb.artifact_hash,
            "verdicts": [v.model_dump(mode="json") for v in fb.verdicts],
            "evidence": [e.model_dump(mode="json") for e in fb.evidence],
            "feedback": fb.model_dump(mode="json"),
            "timings_ms": self.timings_ms,
        }
        if sizes:
            line["sizes"] = sizes
        return line


@dataclass
class Episode:
    """Up to ``budget`` proposals on one task of one domain, optionally traced to a chained JSONL file.

    ``key`` signs every trace line (HMAC-SHA256). :meth:`resume` continues the episode a trace file
    already holds (``rac-fw submit --trace`` runs one turn per invocation).
    """

    domain: Domain
    task: str
    budget: int = DEFAULT_BUDGET
    seed: int = 0
    trace: Path | None = None
    meter: Meter | None = None
    key: bytes | None = None
    execute: TurnExecutor | None = None
    turns: list[TurnRecord] = field(default_factory=list)
    _observation: Observation | None = None
    _writer: TraceWriter | None = None

    @classmethod
    def resume(cls, domain: Domain, task: str, trace: Path, seed: int = 0, budget: int = DEFAULT_BUDGET,
               key: bytes | None = None) -> Episode:
        """The episode recorded in ``trace`` (a new one when the file is missing or empty).

        A trace whose chain or structure is broken, or that records another domain, task or seed, is not
        extended: ``TraceError`` with the findings. Nor is a signed trace without its ``key``, or an unsigned
        one whose header claims more than ``budget`` proposals (:func:`rac_fw.trace.check_budget`).
        """
        episode = cls(domain, task, budget=budget, seed=seed, trace=trace, key=key)
        if not trace.is_file() or trace.stat().st_size == 0:
            return episode
        structure = check_structure(trace, key)
        problems = [f for f in structure.findings if f.field != "close"]
        where = str(trace)
        if problems:
            raise _unextendable(where, problems)
        header = structure.header
        assert header is not None  # a trace without findings has its header
        recorded = (header.domain, header.task, header.seed)
        if recorded != (domain.name, task, seed):
            raise TraceError([Evidence(
                code="E_TRACE", location=f"{where}:1", objects=[header.task, task],
                message=f"the trace records {header.domain}/{header.task} with seed {header.seed}; this turn is "
                f"{domain.name}/{task} with seed {seed}: use another trace file")])
        if key is None and structure.signed:
            problems.append(Finding(1, "mac", f"the trace is signed ({structure.signed} line(s)): give --key to extend "
                                    "it (unsigned lines would end what its signatures vouch for)"))
        raised = check_budget(structure, key, budget)
        problems += [raised] if raised else []
        if problems:
            raise _unextendable(where, problems)
        episode.budget = header.budget
        for _, turn in structure.turns:
            episode.turns.append(TurnRecord(Feedback.model_validate(turn.feedback), turn.timings_ms, turn.action))
        episode._writer = TraceWriter(trace, key, structure.head)
        if structure.close is not None:
            episode._writer = None  # closed: nothing more is written
        return episode

    @property
    def passed(self) -> bool:
        return any(t.feedback.status is Status.PASS for t in self.turns)

    @property
    def done(self) -> bool:
        return len(self.turns) >= self.budget or self.passed

    def observe(self, detail: str | None = None) -> Observation:
        obs = self.domain.observe(self.task, detail)
        if detail is None:
            self._observation = obs
        return obs

    def budget_feedback(self) -> Feedback:
        """The answer to a proposal made after the episode ended: ``closed`` after a pass, else ``budget``."""
        used = len(self.turns)
        if self.passed:
            passed_at = next(t.feedback.turn for t in self.turns if t.feedback.status is Status.PASS)
            status = Status.CLOSED
            verdict = Verdict(predicate="episode_open", passed=False, measured=used, limit=self.budget,
                              unit="proposals", detail=f"the episode passed at turn {passed_at}; {used} of "
                              f"{self.budget} proposals were used and no further proposal is judged")
        else:
            status = Status.BUDGET
            verdict = Verdict(predicate="proposal_budget", passed=False, measured=used + 1, limit=self.budget,
                              unit="proposals", detail=f"proposal budget of {self.budget} spent")
        return Feedback(domain=self.domain.name, task=self.task, turn=used + 1, status=status, verdicts=[verdict])

    def refusal(self, exc: LimitExceeded) -> Feedback:
        """The answer to a payload refused before it became a proposal (nothing spent, nothing traced)."""
        return Feedback(domain=self.domain.name, task=self.task, turn=len(self.turns) + 1, status=Status.INVALID,
                        evidence=[exc.evidence()])

    def submit(self, action: Action, execute: TurnExecutor | None = None) -> Feedback:
        """Run one turn for ``action`` (or return the closed/budget verdict when the episode is over).

        ``execute`` runs the turn (default: the episode's executor, else :func:`run_turn` in process); a
        turn it stops at a ceiling (``LimitExceeded``) is refused like an oversized payload: unspent."""
        if self.done:
            return self.budget_feedback()
        try:
            check_size(action.payload, "payload")
            if self.meter is not None:  # metered (the MCP server): the tokens are bounded before they are counted
                check_tokens(canonical_json(action.payload), "payload")
            runner = execute or self.execute or run_turn
            record = runner(self.domain, self.task, action, self.seed, len(self.turns) + 1)
        except LimitExceeded as exc:
            return self.refusal(exc)
        if self.trace is not None:
            try:  # a line past trace_line_bytes is not written, so the turn is not spent either
                writer = self._trace_writer()
                writer.append(record.trace_line(self.seed, self._sizes(action, record)))
            except LimitExceeded as exc:
                return self.refusal(exc)
            self.turns.append(record)
            if self.done:
                writer.append({"kind": "close", "turns": len(self.turns),
                               "outcome": "pass" if self.passed else "budget"})
        else:
            self.turns.append(record)
        return record.feedback

    def _trace_writer(self) -> TraceWriter:
        if self._writer is None:
            assert self.trace is not None
            self._writer = TraceWriter(self.trace, self.key)
            self._writer.append({"kind": "header", "format": TRACE_FORMAT, "domain": self.domain.name,
                                 "task": self.task, "seed": self.seed, "budget": self.budget,
                                 "rac_fw": rac_fw_version(), "facts_hash": facts_hash_of(self.domain, self.task)})
        return self._writer

    def _sizes(self, action: Action, record: TurnRecord) -> dict[str, Any] | None:
        if self.meter is None:
            return None
        obs = self._observation or self.domain.observe(self.task)
        return {
            name: dict(zip(("bytes", "tokens"), self.meter(text), strict=True))
            for name, text in (
                ("observation", obs.model_dump_json()),
                ("action", action.model_dump_json()),
                ("feedback", record.feedback.model_dump_json()),
            )
        }


def _unextendable(where: str, problems: list[Finding]) -> TraceError:
    return TraceError([Evidence(code="E_TRACE", location=f"{where}:{f.line}", objects=[f.field],
                                message=f"cannot extend the trace: {f.message}") for f in problems])


def run_turn(domain: Domain, task: str, action: Action, seed: int, turn: int = 1) -> TurnRecord:
    """Order the operations of one turn and time each; invalid actions stop after ``validate``."""
    clock = time.perf_counter
    t0 = clock()
    try:
        check_document(action.payload, "payload")
    except LimitExceeded as exc:
        validation = Validation(None, [exc.evidence()])
    except NumberOutOfRange as exc:
        validation = Validation(None, exc.evidence)
    else:
        validation = domain.validate(task, action)
    t1 = clock()
    timings = {"validate": (t1 - t0) * 1e3}
    verification: Verification | None = None
    artifact_hash = None
    if validation.ok:
        realization = domain.realize(task, validation.action, seed)
        t2 = clock()
        verification = domain.verify(task, validation.action, realization)
        t3 = clock()
        timings["realize"] = (t2 - t1) * 1e3
        timings["verify"] = (t3 - t2) * 1e3
        artifact_hash = realization.artifact_hash
        t1 = t3
    feedback = domain.feedback(task, validation, verification)
    timings["feedback"] = (clock() - t1) * 1e3
    feedback.turn = turn
    feedback.artifact_hash = artifact_hash
    return TurnRecord(feedback=feedback, timings_ms=timings, action=action)


@dataclass
class Divergence:
    """A difference between a recorded turn and its re-execution, or a structural finding of the trace."""

    line: int
    field: str
    recorded: Any = None
    replayed: Any = None
    message: str = ""


@dataclass
class Replay:
    """A replay's outcome: turns re-executed, every divergence, and how far authenticity was checked."""

    turns: int
    divergences: list[Divergence]
    signatures: str


def replay(path: Path, key: bytes | None = None, budget: int = DEFAULT_BUDGET) -> tuple[int, list[Divergence]]:
    """:func:`replay_report` as (turn count, divergences)."""
    done = replay_report(path, key, budget)
    return done.turns, done.divergences


def replay_report(path: Path, key: bytes | None = None, budget: int = DEFAULT_BUDGET) -> Replay:
    """Check a trace's chain and structure, re-execute every turn; report the divergences.

    Structural findings (broken chain, bad signature, reordered/missing/duplicated/renumbered turns, a
    header that does not match, a missing closing record, unknown fields, an empty trace, a budget above
    ``budget`` in a header no checked signature vouches for) come first, then re-execution differences.
    ``signatures`` says whether the signatures were checked, absent, or present but unchecked (no key).
    Raises ``TraceError`` for content that is not a trace (not JSON, ill-typed) and for a line naming a
    domain or task that does not exist.
    """

    def facts(domain: str, task: str) -> str | None:
        try:
            return facts_hash_of(load_domain(domain), task)
        except LookupError:
            return None

    structure = check_structure(path, key, facts)
    raised = check_budget(structure, key, budget)
    found = sorted([*structure.findings, *([raised] if raised else [])], key=lambda f: f.line)
    divergences = [Divergence(f.line, f.field, message=f.message) for f in found]
    for number, line in structure.turns:
        try:
            domain = load_domain(line.domain)
            record = run_turn(domain, line.task, line.action, line.seed, turn=line.turn)
        except LookupError as exc:
            raise TraceError([Evidence(code="E_TRACE", message=f"line {number}: {exc}",
                                       location=f"{path}:{number}")]) from None
        fresh = record.trace_line(line.seed)
        for key_ in ("artifact_hash", "status", "verdicts", "evidence", "feedback"):
            recorded = getattr(line, key_)
            if canonical_json(fresh[key_]) != canonical_json(recorded):
                divergences.append(Divergence(number, key_, recorded, fresh[key_]))
    return Replay(len(structure.turns), divergences, signatures(structure, key))
