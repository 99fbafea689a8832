"""The trace file: one episode as a hash chain of JSON lines, optionally signed with the user's key.

A trace is evidence of what an agent tried, so it must show a failed attempt that someone later
removes. Every line is the canonical JSON of one record and carries ``prev``, the sha256 of the
previous line's text (the first line carries :data:`GENESIS`): a line edited, dropped, duplicated or
moved breaks the chain at a located place. The records are a ``header`` (domain, task, seed, budget,
rac-fw version, the hash of the facts the agent observed), one ``turn`` per proposal, numbered 1, 2, …,
and a ``close`` record when the episode ends (pass, or budget spent). A chain alone does not stop a
forger who recomputes every hash; a key (``--key FILE``) adds ``mac``, an HMAC-SHA256 of each record,
so the chain head can be checked by someone who holds the key but did not run the episode.

:func:`check_structure` finds every structural forgery (it never re-executes); ``runtime.replay``
adds re-execution on top of it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rac_fw.contract import Action, Evidence, canonical_json, evidence_from_validation_error, sha256_of
from rac_fw.limits import LimitExceeded, current_limits

#: The ``prev`` of an episode's first line.
GENESIS = "0" * 64
#: Version of the line format written by :class:`TraceWriter`.
TRACE_FORMAT = "rac-fw-trace/2"


class TraceError(ValueError):
    """A trace that cannot be read or extended; ``evidence`` says which line and what is wrong."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(e.message for e in evidence))


def line_hash(text: str) -> str:
    """sha256 of one line's text as written (without its newline): what the next line's ``prev`` holds."""
    return hashlib.sha256(text.encode()).hexdigest()


def mac_of(key: bytes, record: dict[str, Any]) -> str:
    """HMAC-SHA256 of a record's canonical JSON without its own ``mac``."""
    body = {k: v for k, v in record.items() if k != "mac"}
    return hmac.new(key, canonical_json(body).encode(), hashlib.sha256).hexdigest()


def load_key(path: Path) -> bytes:
    """The signing key from a file (surrounding whitespace stripped); an empty or unreadable file is an error."""
    try:
        key = path.read_bytes().strip()
    except OSError as exc:
        raise TraceError([Evidence(code="E_FILE", message=f"cannot read the key file: {exc.strerror or exc}",
                                   location=str(path))]) from None
    if len(key) < 16:
        raise TraceError([Evidence(code="E_KEY", location=str(path),
                                   message=f"the key file holds {len(key)} byte(s); a signing key needs at least 16")])
    return key


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prev: str | None = Field(default=None, description="sha256 of the previous line's text (GENESIS for line 1).")
    mac: str | None = Field(default=None, description="HMAC-SHA256 of this record without 'mac' (signed traces).")


class TraceHeader(_Record):
    """What the episode was: every turn must agree with it."""

    kind: Literal["header"]
    format: str
    domain: str
    task: str
    seed: int
    budget: int = Field(ge=1)
    rac_fw: str
    facts_hash: str | None = None


class TraceTurn(_Record):
    """One proposal and what it got; ``replay`` re-executes ``action`` and compares the rest."""

    kind: Literal["turn"] = "turn"
    turn: int = Field(ge=1)
    domain: str
    task: str
    seed: int = 0
    action: Action
    status: str | None = None
    artifact_hash: str | None = None
    verdicts: list[Any] = Field(default_factory=list)
    evidence: list[Any] = Field(default_factory=list)
    feedback: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    sizes: dict[str, Any] | None = None


class TraceClose(_Record):
    """The end of the episode: how many turns it had and how it ended."""

    kind: Literal["close"]
    turns: int = Field(ge=0)
    outcome: Literal["pass", "budget"]


_MODELS: dict[str, type[_Record]] = {"header": TraceHeader, "turn": TraceTurn, "close": TraceClose}


@dataclass
class Finding:
    """A structural problem of a trace, located by line (reported like a replay divergence)."""

    line: int
    field: str
    message: str


@dataclass
class Line:
    number: int
    text: str
    raw: dict[str, Any]
    record: _Record | None = None


@dataclass
class Structure:
    """A trace read and checked: its records by kind and every structural finding."""

    lines: list[Line]
    findings: list[Finding] = field(default_factory=list)
    header: TraceHeader | None = None
    turns: list[tuple[int, TraceTurn]] = field(default_factory=list)
    close: TraceClose | None = None
    head: str = GENESIS
    close_line: int = 0
    signed: int = 0
    """Lines carrying a signature (``mac``), checked or not."""


def _read_lines(path: Path, findings: list[Finding]) -> list[Line]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TraceError([Evidence(code="E_TRACE", message=f"cannot read {path}: {exc.strerror or exc}",
                                   location=str(path))]) from None
    limit = current_limits().trace_line_bytes
    try:
        text_all = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError([Evidence(code="E_TRACE", message=f"{path} is not UTF-8 text: {exc.reason}",
                                   location=f"{path}: byte {exc.start}")]) from None
    pieces = text_all.split("\n")
    cut = pieces[-1] != ""  # the last line has no newline: the write was cut short
    if not cut:
        pieces.pop()
    lines: list[Line] = []
    for number, text in enumerate(pieces, start=1):
        where = f"{path}:{number}"
        if not text.strip():
            continue
        if len(text.encode()) > limit:
            raise TraceError([LimitExceeded("trace_line_bytes", limit, len(text.encode()), where).evidence()])
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            if cut and number == len(pieces):
                findings.append(Finding(number, "line", f"line {number} is cut off mid-record (no newline, not "
                                        "JSON): the trace was truncated"))
                break
            raise TraceError([Evidence(code="E_TRACE", message=f"line {number} is not JSON: {exc.msg}",
                                       location=f"{where}, column {exc.colno}")]) from None
        if not isinstance(raw, dict):
            raise TraceError([Evidence(code="E_TRACE", message=f"line {number} is not a trace record "
                                       f"(got {type(raw).__name__})", location=where)])
        lines.append(Line(number, text, raw))
    return lines


def _parse(path: Path, line: Line, findings: list[Finding]) -> None:
    """Type the record; unknown fields are findings, other malformed content is a ``TraceError``."""
    where = f"{path}:{line.number}"
    kind = line.raw.get("kind", "turn")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        findings.append(Finding(line.number, "kind", f"line {line.number}: unknown record kind {kind!r}; "
                                f"expected one of {', '.join(_MODELS)}"))
        return
    known = {k: v for k, v in line.raw.items() if k in model.model_fields}
    for name in sorted(set(line.raw) - set(known)):
        findings.append(Finding(line.number, name, f"line {line.number}: unknown field {name!r} in a {kind} record"))
    try:
        record = model.model_validate(known)
    except ValidationError as exc:
        raise TraceError(evidence_from_validation_error(exc, source=where, code="E_TRACE")) from None
    if isinstance(record, TraceTurn) and (record.action.domain, record.action.task) != (record.domain, record.task):
        raise TraceError([Evidence(
            code="E_TRACE", location=f"{where}: action",
            message=f"line {line.number}: the action is for {record.action.domain}/{record.action.task} but "
            f"the turn was recorded for {record.domain}/{record.task}",
            objects=[record.action.task, record.task])])
    line.record = record


def _check_chain(lines: list[Line], key: bytes | None, findings: list[Finding], signed: list[int]) -> str:
    """Every line's ``prev`` against the line before it (and its ``mac`` against the key); returns the head
    and lists the signed lines in ``signed``."""
    expected, previous_number = GENESIS, 0
    seen: dict[str, int] = {}
    for line in lines:
        prev = line.raw.get("prev")
        n = line.number
        if prev is None:
            findings.append(Finding(n, "prev", f"line {n} carries no chain hash: not written by a chained "
                                    f"writer ({TRACE_FORMAT}), or the field was removed"))
        elif prev != expected:
            if prev in seen:
                message = (f"line {n} is chained after line {seen[prev]}, not after line {previous_number}: lines "
                           "were reordered, duplicated or inserted")
            elif previous_number == 0:
                message = f"line {n} does not start a chain: lines before it were removed"
            else:
                message = (f"line {n} does not follow line {previous_number}: line {previous_number} was edited, "
                           "or lines between them were removed")
            findings.append(Finding(n, "prev", message))
        if isinstance(line.raw.get("mac"), str):
            signed.append(n)
        if key is not None:
            mac = line.raw.get("mac")
            if not isinstance(mac, str):
                findings.append(Finding(n, "mac", f"line {n} is not signed, but a key was given"))
            elif not hmac.compare_digest(mac, mac_of(key, line.raw)):
                findings.append(Finding(n, "mac", f"line {n}: the signature does not match (the line was edited, "
                                        "or signed with another key)"))
        expected = line_hash(line.text)
        seen.setdefault(expected, n)
        previous_number = n
    return expected


def _check_episode(s: Structure, facts_hash: Any) -> None:
    """Header first, consecutive turns that agree with it, nothing after a pass, a close that tallies."""
    findings = s.findings
    passed_at: int | None = None
    last_turn, last_line = 0, 0
    for line in s.lines:
        record, n = line.record, line.number
        if s.close is not None:
            findings.append(Finding(n, "kind", f"line {n} follows the episode's closing record"))
        if isinstance(record, TraceHeader):
            if s.header is not None or n != s.lines[0].number:
                findings.append(Finding(n, "kind", f"line {n}: a header inside the episode (only line 1 may be one)"))
                continue
            s.header = record
        elif isinstance(record, TraceClose):
            s.close = record
            s.close_line = n
        elif isinstance(record, TraceTurn):
            s.turns.append((n, record))
            header = s.header
            if header is None and len(s.turns) == 1:
                findings.append(Finding(n, "header", f"line {n}: the episode has no header before its first turn"))
            if header is not None:
                for name in ("domain", "task", "seed"):
                    if getattr(record, name) != getattr(header, name):
                        findings.append(Finding(n, name, f"line {n}: {name} {getattr(record, name)!r} differs from "
                                                f"the header's {getattr(header, name)!r}"))
            t = record.turn
            if t == last_turn:
                findings.append(Finding(n, "turn", f"line {n}: turn {t} is duplicated (also line {last_line})"))
            elif t < last_turn:
                findings.append(Finding(n, "turn", f"line {n}: turn {t} is out of order (after turn {last_turn}, "
                                        f"line {last_line})"))
            elif t > last_turn + 1:
                missing = f"{last_turn + 1}" if t == last_turn + 2 else f"{last_turn + 1}-{t - 1}"
                findings.append(Finding(n, "turn", f"line {n}: turn(s) {missing} missing before turn {t}"))
            fb_turn = record.feedback.get("turn")
            if fb_turn is not None and fb_turn != t:
                findings.append(Finding(n, "turn", f"line {n}: recorded as turn {t} but its feedback is for turn "
                                        f"{fb_turn}: the turn was renumbered"))
            if passed_at is not None:
                findings.append(Finding(n, "turn", f"line {n}: a turn after the episode passed (line {passed_at})"))
            if record.status == "pass" and passed_at is None:
                passed_at = n
            last_turn, last_line = max(last_turn, t), n
    if s.header is not None:
        header_line = s.lines[0].number
        if s.header.format != TRACE_FORMAT:
            findings.append(Finding(header_line, "format", f"line {header_line}: unknown trace format "
                                    f"{s.header.format!r} (this rac-fw writes {TRACE_FORMAT})"))
        if len(s.turns) > s.header.budget:
            findings.append(Finding(header_line, "budget", f"the episode has {len(s.turns)} turns but its header "
                                    f"allows {s.header.budget}"))
        if facts_hash is not None:
            current = facts_hash(s.header.domain, s.header.task)
            if current is not None and s.header.facts_hash != current:
                findings.append(Finding(header_line, "facts_hash", f"line {header_line}: the header's facts hash "
                                        f"{str(s.header.facts_hash)[:16]}… is not the hash of {s.header.domain}/"
                                        f"{s.header.task}'s facts ({current[:16]}…): header edited or facts changed"))
    last = s.lines[-1].number if s.lines else 1
    if s.close is None:
        findings.append(Finding(last, "close", f"the episode has no closing record after line {last}: the trace "
                                "was truncated (or the episode is still open)"))
    else:
        at = s.close_line
        if s.close.turns != len(s.turns):
            findings.append(Finding(at, "close", f"line {at}: the closing record counts {s.close.turns} turn(s), "
                                    f"the trace holds {len(s.turns)}: turns were removed or added"))
        ended = "pass" if passed_at is not None else "budget"
        if s.close.outcome != ended:
            findings.append(Finding(at, "close", f"line {at}: the closing record says {s.close.outcome!r}, the "
                                    f"turns say {ended!r}"))
        elif ended == "budget" and s.header is not None and len(s.turns) < s.header.budget:
            findings.append(Finding(at, "close", f"line {at}: closed as 'budget' after {len(s.turns)} of "
                                    f"{s.header.budget} proposals"))


def check_structure(path: Path, key: bytes | None = None, facts_hash: Any = None) -> Structure:
    """Read a trace and report every structural finding (chain, signature, header, numbering, close).

    ``facts_hash(domain, task)`` recomputes the header's facts hash when given. Raises ``TraceError``
    only for content that is not a trace at all (not JSON, not a record, ill-typed fields).
    """
    findings: list[Finding] = []
    lines = _read_lines(path, findings)
    structure = Structure(lines, findings)
    if not lines:
        if not findings:
            findings.append(Finding(1, "trace", "empty trace: no header, no turns (the episode was removed)"))
        return structure
    for line in lines:
        _parse(path, line, findings)
    signed: list[int] = []
    structure.head = _check_chain(lines, key, findings, signed)
    structure.signed = len(signed)
    _check_episode(structure, facts_hash)
    findings.sort(key=lambda f: f.line)
    return structure


def authentic(structure: Structure, key: bytes | None) -> bool:
    """Whether the trace's records are vouched for: every line signed and checked against ``key`` (a bad
    signature is a finding). Without that, the header — its budget included — is only the file's claim."""
    return key is not None and bool(structure.lines) and structure.signed == len(structure.lines)


def check_budget(structure: Structure, key: bytes | None, granted: int) -> Finding | None:
    """An unauthenticated header may not claim more proposals than ``granted`` (the budget the checker, or
    the runtime continuing the episode, gives): a chain is recomputable, so a raised budget re-chained
    would otherwise pass. A signed header checked with the key is authentic and keeps its budget."""
    header = structure.header
    if header is None or authentic(structure, key) or header.budget <= granted:
        return None
    line = structure.lines[0].number
    return Finding(line, "budget", f"line {line}: the header claims a budget of {header.budget} proposals, more than "
                   f"the {granted} granted, and nothing vouches for it (no signature checked with a key): a budget "
                   "raised and re-chained looks exactly like this (grant more with --budget N if you did)")


def signatures(structure: Structure, key: bytes | None) -> str:
    """What the replay could say about who wrote the trace, in one sentence."""
    lines = len(structure.lines)
    if key is not None:
        return f"signatures checked with the key ({structure.signed} of {lines} line(s) signed)"
    if structure.signed:
        return (f"signatures NOT checked: {structure.signed} of {lines} line(s) are signed but no --key was given, so "
                "only the hash chain was checked, which whoever rewrites the whole file can recompute")
    return ("unsigned trace: the hash chain shows an edited, removed or moved line, not a rewrite of the whole file "
            "(sign traces with --key to make that visible too)")


def facts_hash_of(domain: Any, task: str) -> str:
    """Hash of what the agent observed at the start of the episode (the task's facts)."""
    return sha256_of(domain.observe(task).model_dump(mode="json"))


@dataclass
class TraceWriter:
    """Appends chained (and, with a key, signed) records to a trace file."""

    path: Path
    key: bytes | None = None
    head: str = GENESIS

    def append(self, record: dict[str, Any]) -> None:
        body = {**record, "prev": self.head}
        body.pop("mac", None)
        if self.key is not None:
            body["mac"] = mac_of(self.key, body)
        text = canonical_json(body)
        limit = current_limits().trace_line_bytes
        if len(text.encode()) > limit:
            raise LimitExceeded("trace_line_bytes", limit, len(text.encode()), str(self.path))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(text + "\n")
        self.head = line_hash(text)
