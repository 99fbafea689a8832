"""Predicted console traces and the line-for-line judge of a run against one.

A trace is a regular language over console lines: :class:`Line` (one line matching a regex), :class:`Repeat`
(its items between ``lo`` and ``hi`` times), :class:`Choice` (one of several sequences, where the plan leaves
a condition open) and :class:`Open` (any lines: the prediction stops being exact there). A run matches when
*every* line from ``rac: boot`` to ``rac: done`` is consumed by the trace in order: an extra, missing or
different line is a mismatch, reported with the line number and the patterns that were expected there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rac_fw.contract import Evidence, Magnitude, Verdict

#: Unrolled states a matcher may build (a trace that would need more is judged as far as it unrolls).
MAX_STATES = 20_000


@dataclass(frozen=True)
class Line:
    """One console line: its regex, the exact text where the plan determines it, and the step it comes from."""

    pattern: str
    source: str = ""
    text: str | None = None


@dataclass(frozen=True)
class Repeat:
    items: tuple[Item, ...]
    lo: int
    hi: int | None
    """None: unbounded."""


@dataclass(frozen=True)
class Choice:
    options: tuple[tuple[Item, ...], ...]


@dataclass(frozen=True)
class Open:
    """Any lines (none included): where the predictor cannot say what comes."""

    why: str


Item = Line | Repeat | Choice | Open


def literal(text: str) -> str:
    """``text`` as a regex that matches it exactly (spaces left readable)."""
    return re.escape(text).replace("\\ ", " ")


def exact(text: str, source: str = "") -> Line:
    return Line("^" + literal(text) + "$", source, text)


def coalesce(items: list[Item]) -> list[Item]:
    """Runs of one identical line become a Repeat (``tick`` ×100 is one item)."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Line) and out:
            last = out[-1]
            if last == item:
                out[-1] = Repeat((item,), 2, 2)
                continue
            if isinstance(last, Repeat) and last.items == (item,) and last.lo == last.hi:
                out[-1] = Repeat((item,), last.lo + 1, last.hi + 1 if last.hi is not None else None)
                continue
        out.append(item)
    return out


def to_json(items: list[Item] | tuple[Item, ...]) -> list[dict[str, Any]]:
    """The trace as plain data (the receipt, ``rac-fw plan --json``)."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Line):
            out.append({"line": item.pattern, **({"from": item.source} if item.source else {})})
        elif isinstance(item, Repeat):
            out.append({"repeat": to_json(item.items), "min": item.lo, "max": item.hi})
        elif isinstance(item, Choice):
            out.append({"choice": [to_json(o) for o in item.options]})
        else:
            out.append({"open": item.why})
    return out


def from_json(data: list[dict[str, Any]]) -> list[Item]:
    items: list[Item] = []
    for entry in data:
        if "line" in entry:
            items.append(Line(entry["line"], entry.get("from", "")))
        elif "repeat" in entry:
            items.append(Repeat(tuple(from_json(entry["repeat"])), entry["min"], entry.get("max")))
        elif "choice" in entry:
            items.append(Choice(tuple(tuple(from_json(o)) for o in entry["choice"])))
        else:
            items.append(Open(entry.get("open", "")))
    return items


def exact_lines(items: list[Item] | tuple[Item, ...]) -> list[str] | None:
    """The regexes in order when the trace is one fixed sequence (repeats expanded), else None."""
    out: list[str] = []
    for item in items:
        if isinstance(item, Line):
            out.append(item.pattern)
        elif isinstance(item, Repeat) and item.lo == item.hi:
            inner = exact_lines(item.items)
            if inner is None:
                return None
            out.extend(inner * item.lo)
        else:
            return None
    return out


def count_lines(items: list[Item] | tuple[Item, ...]) -> tuple[int, int | None]:
    """The fewest and most lines the trace admits (None: unbounded)."""
    lo: int = 0
    hi: int | None = 0
    for item in items:
        if isinstance(item, Line):
            lo, hi = lo + 1, None if hi is None else hi + 1
        elif isinstance(item, Repeat):
            a, b = count_lines(item.items)
            lo += a * item.lo
            hi = None if hi is None or b is None or item.hi is None else hi + b * item.hi
        elif isinstance(item, Choice):
            counts = [count_lines(o) for o in item.options]
            lo += min(c[0] for c in counts)
            highs = [c[1] for c in counts]
            hi = None if hi is None or None in highs else hi + max(h for h in highs if h is not None)
        else:
            hi = None
    return lo, hi


# --- the matcher: a Thompson NFA over lines ----------------------------------------------------------


@dataclass
class _Nfa:
    patterns: list[tuple[re.Pattern[str], str, str] | None] = field(default_factory=list)
    """Per state: the line test (regex, its text, its source) or None for a split/jump."""
    edges: list[list[int]] = field(default_factory=list)
    """Epsilon edges of split states; a line state's one edge is where it goes after consuming a line."""
    wildcard: list[bool] = field(default_factory=list)

    def state(self, test: tuple[re.Pattern[str], str, str] | None = None, wildcard: bool = False) -> int:
        self.patterns.append(test)
        self.edges.append([])
        self.wildcard.append(wildcard)
        if len(self.patterns) > MAX_STATES:
            raise OverflowError("trace too large to unroll")
        return len(self.patterns) - 1


def _build(nfa: _Nfa, items: tuple[Item, ...] | list[Item], start: int) -> int:
    """Add ``items`` after state ``start``; return the state that ends them."""
    current = start
    for item in items:
        if isinstance(item, Line):
            node = nfa.state((re.compile(item.pattern), item.pattern, item.source))
            nfa.edges[current].append(node)
            end = nfa.state()
            nfa.edges[node].append(end)
            current = end
        elif isinstance(item, Repeat):
            for _ in range(item.lo):
                current = _build(nfa, item.items, current)
            if item.hi is None:
                loop = nfa.state()
                nfa.edges[current].append(loop)
                body_end = _build(nfa, item.items, loop)
                nfa.edges[body_end].append(loop)
                current = loop
            else:
                end = nfa.state()
                for _ in range(item.hi - item.lo):
                    nfa.edges[current].append(end)
                    current = _build(nfa, item.items, current)
                nfa.edges[current].append(end)
                current = end
        elif isinstance(item, Choice):
            end = nfa.state()
            for option in item.options:
                branch = nfa.state()
                nfa.edges[current].append(branch)
                nfa.edges[_build(nfa, option, branch)].append(end)
            current = end
        else:
            node = nfa.state(wildcard=True)
            nfa.edges[current].append(node)
            nfa.edges[node].append(node)
            end = nfa.state()
            nfa.edges[node].append(end)
            nfa.edges[current].append(end)
            current = end
    return current


def _closure(nfa: _Nfa, states: set[int]) -> set[int]:
    stack, seen = list(states), set(states)
    while stack:
        s = stack.pop()
        if nfa.patterns[s] is None and not nfa.wildcard[s]:
            for t in nfa.edges[s]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        elif nfa.wildcard[s]:
            for t in nfa.edges[s]:
                if t != s and t not in seen:
                    seen.add(t)
                    stack.append(t)
    return seen


@dataclass
class TraceMatch:
    """The outcome of judging console lines against a trace."""

    ok: bool
    lines: int
    """Lines judged (from ``rac: boot`` to ``rac: done``)."""
    failed_at: int | None = None
    """1-based index (within the judged lines) of the first line the trace does not admit."""
    line: str | None = None
    expected: list[tuple[str, str]] = field(default_factory=list)
    """``(pattern, source)`` the trace admitted where it failed."""
    ended_early: bool = False

    def verdict(self) -> Verdict:
        return Verdict(predicate="console matches the predicted trace line for line", passed=self.ok,
                       measured=self.line if not self.ok else self.lines, unit=None if not self.ok else "lines",
                       detail=None if self.ok else self.describe())  # fmt: skip

    def describe(self) -> str:
        wanted = ", ".join(f"/{p}/" + (f" ({s})" if s else "") for p, s in self.expected[:4]) or "nothing more"
        if self.ended_early:
            return f"the run ended after {self.lines} line(s) while the trace still expected {wanted}"
        return f"line {self.failed_at} {self.line!r} is not what the trace expects there: {wanted}"

    def evidence(self) -> list[Evidence]:
        if self.ok:
            return []
        return [Evidence(code="E_TRACE_MISMATCH", message=self.describe(),
                         objects=[s for _, s in self.expected[:4] if s],
                         magnitudes=[Magnitude(name="matched_lines", value=(self.failed_at or self.lines + 1) - 1,
                                               unit="lines")])]  # fmt: skip


def window(transcript: list[str]) -> list[str]:
    """The lines a trace judges: from the first ``rac: boot`` through the first ``rac: done`` (inclusive)."""
    start = next((i for i, line in enumerate(transcript) if line.startswith("rac: boot")), None)
    if start is None:
        return []
    for end in range(start, len(transcript)):
        if transcript[end].startswith("rac: done"):
            return transcript[start : end + 1]
    return transcript[start:]


def match(items: list[Item] | tuple[Item, ...], lines: list[str]) -> TraceMatch:
    """Judge ``lines`` (already cut to the window) against the trace, every line consumed in order."""
    nfa = _Nfa()
    start = nfa.state()
    accept = _build(nfa, items, start)
    current = _closure(nfa, {start})
    for number, line in enumerate(lines, 1):
        following: set[int] = set()
        for s in current:
            test = nfa.patterns[s]
            if nfa.wildcard[s]:
                following.add(s)
            elif test is not None and test[0].search(line):
                following.update(nfa.edges[s])
        if not following:
            return TraceMatch(False, len(lines), number, line, _expected(nfa, current))
        current = _closure(nfa, following)
    if accept in current:
        return TraceMatch(True, len(lines))
    return TraceMatch(False, len(lines), None, None, _expected(nfa, current), ended_early=True)


def _expected(nfa: _Nfa, states: set[int]) -> list[tuple[str, str]]:
    found = []
    for s in sorted(states):
        test = nfa.patterns[s]
        if test is not None:
            found.append((test[1], test[2]))
        elif nfa.wildcard[s]:
            found.append((".*", "open"))
    return list(dict.fromkeys(found))
