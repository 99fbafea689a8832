"""Ordered console expectations: judge a UART byte stream against a list of regexes, within a deadline.

The QEMU runner (USART1 on stdout) and the bench serial runner (a real board) produce the same kind of
evidence from the same engine: each pattern must match a *line* that comes after the line matching the
previous pattern, all before ``timeout_s`` elapses. A ``forbid`` pattern (``HardFault``, ``FAIL``) ends
the wait at once, so a crashed firmware costs milliseconds, not the whole timeout.

The engine never trusts the firmware's own claims: it only reads bytes. ``read_chunk(wait_s)`` is the
one thing a transport supplies — it returns the bytes that arrived within ``wait_s`` (possibly ``b""``)
or ``None`` once the stream is closed (QEMU exited, port gone).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence, Magnitude, Relaxation, Verdict
from rac_fw.domains.firmware.ops.uart.uart_print import UartPrint

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.model import Plan

#: How long one ``read_chunk`` call may block, so the deadline is checked at least this often.
POLL_S = 0.02

#: Lines kept in evidence when an expectation fails (the tail of the transcript).
EVIDENCE_TAIL_LINES = 8

ReadChunk = Callable[[float], bytes | None]


class ExpectationError(ValueError):
    """A pattern is not a valid regular expression (the message says which one and why)."""


@dataclass(frozen=True)
class Expectations:
    """What the console must show: ``patterns`` in order, none of ``forbid``, within ``timeout_s``."""

    patterns: tuple[str, ...]
    timeout_s: float
    forbid: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ExpectationError(f"timeout_s must be positive, got {self.timeout_s}")
        for kind, group in (("pattern", self.patterns), ("forbid", self.forbid)):
            for index, pattern in enumerate(group):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ExpectationError(f"{kind}[{index}] {pattern!r} is not a valid regex: {exc}") from exc


@dataclass(frozen=True)
class LineMatch:
    """A pattern satisfied by one console line, and when (seconds since the wait began)."""

    pattern: str
    line: str
    line_number: int
    at_s: float


@dataclass
class ConsoleResult:
    """The outcome of one wait: matches in order, every line seen, and why the wait ended."""

    expectations: Expectations
    matches: list[LineMatch] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    closed: bool = False
    """The stream ended (EOF) before the deadline."""
    forbidden: LineMatch | None = None

    @property
    def ok(self) -> bool:
        return self.forbidden is None and len(self.matches) == len(self.expectations.patterns)

    @property
    def transcript(self) -> str:
        return "\n".join(self.lines)

    def verdicts(self) -> list[Verdict]:
        """One verdict per expected pattern (in order) plus one for the forbidden patterns, if any."""
        verdicts: list[Verdict] = []
        for index, pattern in enumerate(self.expectations.patterns):
            hit = self.matches[index] if index < len(self.matches) else None
            verdicts.append(
                Verdict(
                    predicate=f"console[{index}] matches /{pattern}/",
                    passed=hit is not None,
                    measured=hit.line if hit else None,
                    limit=self.expectations.timeout_s,
                    unit="s",
                    detail=(
                        f"line {hit.line_number} at {hit.at_s * 1000:.0f} ms"
                        if hit
                        else f"not seen in {len(self.lines)} line(s) after {self.elapsed_s:.2f} s"
                        + (" (stream closed)" if self.closed else "")
                    ),
                )
            )
        if self.expectations.forbid:
            verdicts.append(
                Verdict(
                    predicate="console shows none of " + ", ".join(f"/{p}/" for p in self.expectations.forbid),
                    passed=self.forbidden is None,
                    measured=self.forbidden.line if self.forbidden else None,
                    detail=f"line {self.forbidden.line_number}" if self.forbidden else None,
                )
            )
        return verdicts

    def evidence(self) -> list[Evidence]:
        """Repair evidence for the first unmet expectation (later ones depend on it) or a forbidden line."""
        tail = self.lines[-EVIDENCE_TAIL_LINES:]
        seen = " | ".join(tail) if tail else "(no output)"
        if self.forbidden is not None:
            return [
                Evidence(
                    code="E_CONSOLE_FORBIDDEN",
                    message=f"console line {self.forbidden.line_number} {self.forbidden.line!r} matches "
                    f"forbidden /{self.forbidden.pattern}/; last lines: {seen}",
                    objects=[self.forbidden.pattern],
                    magnitudes=[Magnitude(name="at", value=round(self.forbidden.at_s * 1000), unit="ms")],
                )
            ]
        if self.ok:
            return []
        missing = len(self.matches)
        pattern = self.expectations.patterns[missing]
        after = self.matches[-1].line_number if self.matches else 0
        why = "the console closed" if self.closed else f"{self.expectations.timeout_s:g} s passed"
        return [
            Evidence(
                code="E_CONSOLE_EXPECTATION",
                message=f"expected a line matching /{pattern}/ after line {after}, but {why}; last lines: {seen}",
                objects=[pattern],
                magnitudes=[
                    Magnitude(name="waited", value=round(self.elapsed_s, 3), unit="s"),
                    Magnitude(name="lines_seen", value=len(self.lines), unit="lines"),
                    Magnitude(name="expectations_met", value=missing, unit="patterns"),
                ],
                relaxations=[
                    Relaxation(
                        description=f"raise the timeout above {self.expectations.timeout_s:g} s if the "
                        "firmware is slow rather than wrong"
                    )
                ]
                if not self.closed
                else [],
            )
        ]


class _LineMatcher:
    """Feeds decoded lines through the ordered patterns; shared by the stream and text entry points."""

    def __init__(self, expectations: Expectations, result: ConsoleResult):
        self.expectations = expectations
        self.result = result
        self.compiled = [re.compile(p) for p in expectations.patterns]
        self.forbid = [re.compile(p) for p in expectations.forbid]

    def feed(self, line: str, at_s: float) -> bool:
        """Record one line; True when the wait is over (all matched or a forbidden line)."""
        result = self.result
        result.lines.append(line)
        number = len(result.lines)
        for pattern in self.forbid:
            if pattern.search(line):
                result.forbidden = LineMatch(pattern.pattern, line, number, at_s)
                return True
        index = len(result.matches)
        if index < len(self.compiled) and self.compiled[index].search(line):
            result.matches.append(LineMatch(self.compiled[index].pattern, line, number, at_s))
        return len(result.matches) == len(self.compiled) and not self.forbid


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")


def match_stream(
    read_chunk: ReadChunk,
    expectations: Expectations,
    clock: Callable[[], float] = time.monotonic,
) -> ConsoleResult:
    """Read until every pattern matched in order, a forbidden line, EOF, or ``timeout_s``.

    With ``forbid`` patterns the wait continues after the last match until EOF or the deadline, so a
    fault printed after the success lines is still caught; the QEMU firmware exits by semihosting, so
    that costs nothing there.
    """
    result = ConsoleResult(expectations)
    matcher = _LineMatcher(expectations, result)
    start = clock()
    deadline = start + expectations.timeout_s
    pending = b""
    done = False
    while not done:
        remaining = deadline - clock()
        if remaining <= 0:
            break
        chunk = read_chunk(min(POLL_S, remaining))
        if chunk is None:
            result.closed = True
            break
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for raw in complete:
            if matcher.feed(_decode(raw), clock() - start):
                done = True
                break
    if not done and pending:
        matcher.feed(_decode(pending), clock() - start)
    result.elapsed_s = clock() - start
    return result


def match_text(text: str, expectations: Expectations) -> ConsoleResult:
    """Judge an already-captured transcript (a log file, a finished run) with the same rules."""
    result = ConsoleResult(expectations, closed=True)
    matcher = _LineMatcher(expectations, result)
    for line in text.splitlines():
        if matcher.feed(line, 0.0):
            break
    return result


# --- the bare-metal test-sequence protocol ------------------------------------------------------
# A bare-metal build prints, on the board console, ``rac: boot <target>``, then for each operation in
# plan order ``rac: <label> ok <details>`` (or ``rac: <label> FAIL <why>``), a ``uart_print`` also
# printing its message first, and finally ``rac: done`` before the semihosting exit. The expectations
# below are derived from the *plan* (what the agent asked for), never from the generated code.

#: Lines that end a bare-metal run as failed at once: an operation's failure or an unexpected fault.
BAREMETAL_FORBID = (r"^rac: .*\b(FAIL|FAULT)\b",)


def operation_label(index: int, op: str, name: str | None) -> str:
    """How an operation is named on the console: its plan ``name``, else ``<op><index>``."""
    return name or f"{op}{index}"


def plan_expectations(plan: Plan, console_uart: str | None) -> tuple[str, ...]:
    """Ordered regexes a bare-metal run of ``plan`` must print on the console UART ``console_uart``."""
    patterns = [r"^rac: boot\b"]
    for index, operation in enumerate(plan.operations):
        label = operation_label(index, operation.op, operation.name)
        if isinstance(operation, UartPrint) and operation.uart in (None, console_uart):
            patterns.append(re.escape(operation.message))
        patterns.append(rf"^rac: {re.escape(label)} ok\b")
    patterns.append(r"^rac: done$")
    return tuple(patterns)
