"""The turn runtime: orders the five operations, enforces the proposal budget, writes the trace.

One *turn* is ``validate → realize → verify → feedback`` for one proposed action (``observe`` opens
the episode and is re-sent inside feedback). An *episode* is up to ``budget`` proposals and ends at the
first clean pass or when the budget is spent. Every turn appends one JSON line to the trace; ``replay``
re-executes a trace and reports divergence in artifact hash, verdicts or serialized feedback.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rac_fw.contract import (
    Action,
    Evidence,
    Feedback,
    Observation,
    Status,
    Verdict,
    canonical_json,
    evidence_from_validation_error,
)
from rac_fw.domain import Domain, Verification, load_domain

DEFAULT_BUDGET = 5

#: Measures a serialized message: returns (bytes, tokens). Set by the MCP server for metering.
Meter = Callable[[str], tuple[int, int]]


@dataclass
class TurnRecord:
    """What one turn produced; ``trace_line`` is its JSON form in the trace file."""

    feedback: Feedback
    timings_ms: dict[str, float]
    action: Action

    def trace_line(self, seed: int, sizes: dict[str, Any] | None = None) -> dict[str, Any]:
        fb = self.feedback
        line: dict[str, Any] = {
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
    """Up to ``budget`` proposals on one task of one domain, optionally traced to a JSONL file."""

    domain: Domain
    task: str
    budget: int = DEFAULT_BUDGET
    seed: int = 0
    trace: Path | None = None
    meter: Meter | None = None
    turns: list[TurnRecord] = field(default_factory=list)
    _observation: Observation | None = None

    @property
    def done(self) -> bool:
        return len(self.turns) >= self.budget or any(t.feedback.status is Status.PASS for t in self.turns)

    def observe(self, detail: str | None = None) -> Observation:
        obs = self.domain.observe(self.task, detail)
        if detail is None:
            self._observation = obs
        return obs

    def budget_feedback(self) -> Feedback:
        """The verdict returned for a proposal made after the episode ended."""
        passed = any(t.feedback.status is Status.PASS for t in self.turns)
        reason = "episode already passed" if passed else f"proposal budget of {self.budget} spent"
        return Feedback(
            domain=self.domain.name,
            task=self.task,
            turn=len(self.turns) + 1,
            status=Status.BUDGET,
            verdicts=[
                Verdict(
                    predicate="proposal_budget",
                    passed=False,
                    measured=len(self.turns) + 1,
                    limit=self.budget,
                    unit="proposals",
                    detail=reason,
                )
            ],
        )

    def submit(self, action: Action) -> Feedback:
        """Run one turn for ``action`` (or return the budget verdict when the episode is over)."""
        if self.done:
            return self.budget_feedback()
        record = run_turn(self.domain, self.task, action, self.seed, turn=len(self.turns) + 1)
        self.turns.append(record)
        if self.trace is not None:
            sizes = None
            if self.meter is not None:
                obs = self._observation or self.domain.observe(self.task)
                sizes = {
                    name: dict(zip(("bytes", "tokens"), self.meter(text), strict=True))
                    for name, text in (
                        ("observation", obs.model_dump_json()),
                        ("action", action.model_dump_json()),
                        ("feedback", record.feedback.model_dump_json()),
                    )
                }
            self.trace.parent.mkdir(parents=True, exist_ok=True)
            with self.trace.open("a", encoding="utf-8") as fh:
                fh.write(canonical_json(record.trace_line(self.seed, sizes)) + "\n")
        return record.feedback


def run_turn(domain: Domain, task: str, action: Action, seed: int, turn: int = 1) -> TurnRecord:
    """Order the operations of one turn and time each; invalid actions stop after ``validate``."""
    clock = time.perf_counter
    t0 = clock()
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


class TraceError(ValueError):
    """A trace line that cannot be replayed; ``evidence`` says which line and what is wrong with it."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(e.message for e in evidence))


class TraceLine(BaseModel):
    """The part of a trace line replay needs; the recorded results are compared, not trusted."""

    model_config = ConfigDict(extra="allow")

    turn: int = Field(ge=1)
    domain: str
    task: str
    seed: int = 0
    action: Action


def read_trace(path: Path) -> Iterator[tuple[int, TraceLine, dict[str, Any]]]:
    """Yield ``(line_number, parsed, raw)`` for each non-empty line; a bad line raises ``TraceError``."""
    with path.open(encoding="utf-8") as fh:
        for number, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            where = f"{path}:{number}"
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise TraceError([Evidence(code="E_TRACE", message=f"line {number} is not JSON: {exc.msg}",
                                           location=f"{where}, column {exc.colno}")]) from None
            if not isinstance(raw, dict):
                raise TraceError([Evidence(code="E_TRACE", message=f"line {number} is not a trace record "
                                           f"(got {type(raw).__name__})", location=where)])
            try:
                parsed = TraceLine.model_validate(raw)
            except ValidationError as exc:
                raise TraceError(evidence_from_validation_error(exc, source=where, code="E_TRACE")) from None
            if (parsed.action.domain, parsed.action.task) != (parsed.domain, parsed.task):
                raise TraceError([Evidence(
                    code="E_TRACE", location=f"{where}: action",
                    message=f"line {number}: the action is for {parsed.action.domain}/{parsed.action.task} but "
                    f"the turn was recorded for {parsed.domain}/{parsed.task}",
                    objects=[parsed.action.task, parsed.task])])
            yield number, parsed, raw


@dataclass
class Divergence:
    """A difference between a recorded turn and its re-execution."""

    line: int
    field: str
    recorded: Any
    replayed: Any


def replay(path: Path) -> tuple[int, list[Divergence]]:
    """Re-execute every turn of a trace; return the number of turns and the divergences found.

    Raises ``TraceError`` for a line that is not a trace record, and the domain's ``UnknownTask`` /
    ``UnknownDomain`` (with the line number added to the message) for one naming what does not exist.
    """
    divergences: list[Divergence] = []
    count = 0
    for number, line, raw in read_trace(path):
        count += 1
        try:
            domain = load_domain(line.domain)
            record = run_turn(domain, line.task, line.action, line.seed, turn=line.turn)
        except LookupError as exc:
            raise TraceError([Evidence(code="E_TRACE", message=f"line {number}: {exc}",
                                       location=f"{path}:{number}")]) from None
        fresh = record.trace_line(line.seed)
        for key in ("artifact_hash", "status", "verdicts", "evidence", "feedback"):
            if canonical_json(fresh[key]) != canonical_json(raw.get(key)):
                divergences.append(Divergence(number, key, raw.get(key), fresh[key]))
    return count, divergences
