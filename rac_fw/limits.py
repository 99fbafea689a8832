"""Input limits: every size an agent controls is bounded, and checked before any expensive work.

A hostile or confused client can send a 10 MB message, 60 000 operations or a million minterms; the
answer must be located evidence (``E_TOO_LARGE`` with the limit and the size) within milliseconds,
never an unbounded wait or an internal error. The numbers below are generous for real use (the
largest shipped example is far below each) and are documented in docs/PROTOCOL.md. The CLI takes
``--limit NAME=VALUE`` and the ``RAC_FW_LIMITS`` environment variable (``name=value,name=value``);
the MCP server's limits are the operator's, never the client's.

Numbers are bounded too: JSON may carry NaN/Infinity (Python's parser accepts them) and values such
as ``5e-324`` or ``1e400`` that overflow the arithmetic of an obligation, so every number in an
action must be finite and zero or within ``[NUMBER_MIN_MAGNITUDE, NUMBER_MAX_MAGNITUDE]``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields, replace
from typing import Any

from rac_fw.contract import Evidence, Magnitude, Relaxation

#: Smallest non-zero magnitude a number in an action may have (below it only 0 is admissible).
NUMBER_MIN_MAGNITUDE = 1e-9
#: Largest magnitude a number in an action may have.
NUMBER_MAX_MAGNITUDE = 1e12


@dataclass(frozen=True)
class Limits:
    """The bound on each size an agent controls (bytes are UTF-8 bytes of canonical JSON or of the file)."""

    plan_bytes: int = 1 << 20  #: a plan or action file
    payload_bytes: int = 1 << 20  #: one action payload / one MCP tool call's arguments
    operations: int = 64  #: operations in a firmware plan (the plan model caps it at 64 too)
    resources: int = 4096  #: buffers + pins + devices + threads in a firmware plan
    name_chars: int = 128  #: any mapping key (output, job, resource name) in an action
    string_chars: int = 4096  #: any string value in an action
    depth: int = 32  #: nesting of mappings/lists in an action
    minterms: int = 4096  #: minterm indices over all outputs of a logic action (8 inputs: 256 per output)
    list_items: int = 65536  #: items of any one list in an action
    task_chars: int = 1024  #: a task id (scheduling accepts a path to an instance file)
    trace_line_bytes: int = 16 << 20  #: one line of a trace file
    request_seconds: float = 120.0  #: wall time of one MCP tool call
    #: address-space growth the MCP server allows one turn: it runs in its own worker process capped at
    #: this much over the worker's start (RLIMIT_AS), see :mod:`rac_fw.mcp.worker`
    request_memory_bytes: int = 2 << 30
    payload_tokens: int = 100_000  #: o200k tokens of one MCP action payload (counted in bounded chunks)
    open_episodes: int = 16  #: unfinished MCP episodes one client (credential) may hold at once
    task_proposals: int = 50  #: MCP proposals one client may make on one task, over all its episodes
    session_idle_seconds: float = 1800.0  #: an MCP session unused this long is closed
    task_file_bytes: int = 1 << 20  #: a task file the MCP server reads from its --task-dir

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def with_overrides(self, overrides: dict[str, str]) -> Limits:
        """A copy with ``name → value`` text overrides applied; unknown names and bad values raise ``ValueError``."""
        changes: dict[str, Any] = {}
        for name, text in overrides.items():
            if name not in self.names():
                raise ValueError(f"unknown limit {name!r}; known: {', '.join(self.names())}")
            kind = type(getattr(self, name))
            try:
                value = kind(text)
            except ValueError:
                raise ValueError(f"limit {name} needs a {kind.__name__}, got {text!r}") from None
            if not value > 0:
                raise ValueError(f"limit {name} must be positive, got {text!r}")
            changes[name] = value
        return replace(self, **changes)


def parse_overrides(items: list[str]) -> dict[str, str]:
    """``["operations=10", "plan_bytes=2000"]`` → a mapping; a malformed item raises ``ValueError``."""
    out: dict[str, str] = {}
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            name, sep, value = part.partition("=")
            if not sep or not name.strip() or not value.strip():
                raise ValueError(f"a limit is NAME=VALUE, got {part!r}")
            out[name.strip()] = value.strip()
    return out


def _from_environment() -> Limits:
    text = os.environ.get("RAC_FW_LIMITS", "")
    try:
        return Limits().with_overrides(parse_overrides([text])) if text else Limits()
    except ValueError:
        return Limits()  # reported by the CLI (``configured``); never a crash at import


_current = _from_environment()


def current_limits() -> Limits:
    """The limits in force for this process (the CLI's ``--limit``, or the server operator's)."""
    return _current


def set_limits(limits: Limits) -> None:
    global _current
    _current = limits


class LimitExceeded(ValueError):
    """An input is larger than a limit; ``evidence()`` is the located ``E_TOO_LARGE``."""

    def __init__(self, limit: str, allowed: float, size: float, location: str | None = None, what: str = ""):
        self.limit, self.allowed, self.size, self.location = limit, allowed, size, location
        self.what = what or limit.replace("_", " ")
        super().__init__(f"{self.what}: {size:g} exceeds the limit {limit}={allowed:g}")

    def __reduce__(self) -> tuple[Any, ...]:  # crosses the MCP server's worker boundary intact
        return (LimitExceeded, (self.limit, self.allowed, self.size, self.location, self.what))

    def evidence(self) -> Evidence:
        excess = self.size - self.allowed
        return Evidence(
            code="E_TOO_LARGE",
            message=f"{self.what} is {self.size:g}, over the limit {self.limit}={self.allowed:g}; nothing past this "
            "check was run",
            location=self.location,
            objects=[self.limit],
            magnitudes=[Magnitude(name=self.limit, value=self.size, unit="size"),
                        Magnitude(name="excess", value=excess, unit="size")],
            relaxations=[Relaxation(description=f"reduce it to at most {self.allowed:g} (or raise the limit with "
                                    f"--limit {self.limit}=N where the operator allows)")],
        )


class CeilingExceeded(LimitExceeded):
    """A request stopped at a run-time ceiling (``request_memory_bytes``, ``request_seconds``) while it ran.

    Unlike an input limit it is only known by running: ``measured`` is what the request reached (its
    worker's peak address-space growth, or the seconds it ran) when it was stopped. It is refused like an
    oversized input: nothing is spent or traced, the server and the other sessions go on.
    """

    def __init__(self, limit: str, allowed: float, measured: float, unit: str, location: str | None, detail: str):
        super().__init__(limit, allowed, measured, location, what=detail)
        self.unit, self.detail = unit, detail

    def evidence(self) -> Evidence:
        return Evidence(
            code="E_TIMEOUT" if self.limit == "request_seconds" else "E_TOO_LARGE",
            message=f"{self.detail}: stopped at {self.size:g} {self.unit}, the ceiling is {self.limit}="
            f"{self.allowed:g}; nothing was spent or traced, other sessions are unaffected",
            location=self.location,
            objects=[self.limit],
            magnitudes=[Magnitude(name=self.limit, value=self.size, unit=self.unit),
                        Magnitude(name="limit", value=self.allowed, unit=self.unit)],
            relaxations=[Relaxation(description=f"make the request smaller (or ask the operator to raise "
                                    f"--limit {self.limit}=N)")],
        )


class NumberOutOfRange(ValueError):
    """A number no field admits (NaN, infinity, denormal-tiny, astronomical); ``evidence`` locates each."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(e.message for e in evidence))


def _fmt(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def _number_evidence(value: float, path: list[str | int], where: str | None) -> Evidence | None:
    lo, hi = NUMBER_MIN_MAGNITUDE, NUMBER_MAX_MAGNITUDE
    if isinstance(value, float) and not math.isfinite(value):
        fix: float = 0.0
        why = "not a finite number"
    elif abs(value) > hi:
        fix, why = (hi if value > 0 else -hi), f"astronomically large (|x| > {hi:g})"
    elif isinstance(value, float) and 0 < abs(value) < lo:
        fix, why = math.copysign(lo, value), f"too small to compute with (0 < |x| < {lo:g})"
    else:
        return None
    text = _fmt(path)
    return Evidence(
        code="E_NUMBER_RANGE", location=f"{where}: {text}" if where else text, objects=[text],
        message=f"{text}: {value!r} is {why}; numbers must be 0 or have a magnitude in [{lo:g}, {hi:g}]",
        relaxations=[Relaxation(description=f"use a value within ±[{lo:g}, {hi:g}] (or 0), e.g. {fix:g}",
                                patch=[{"op": "replace", "path": list(path), "value": fix}])],
    )


def check_size(document: Any, where: str | None = None, limit: str = "payload_bytes") -> None:
    """Raise :class:`LimitExceeded` when the canonical JSON of ``document`` is over the byte ``limit``."""
    import json

    allowed = getattr(current_limits(), limit)
    try:
        size = len(json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode())
    except (TypeError, ValueError, RecursionError):
        size = allowed + 1  # not JSON-able within bounds (e.g. nested past the recursion limit)
    if size > allowed:
        raise LimitExceeded(limit, allowed, size, where, what="the document's size in bytes")


def check_document(document: Any, where: str | None = None) -> None:
    """Bound the shape of an action/plan document before any domain sees it.

    Raises :class:`LimitExceeded` for the first size over a limit (depth, list items, key or string
    length) and :class:`NumberOutOfRange` listing every inadmissible number. One linear walk, no copies.
    """
    lim = current_limits()
    bad: list[Evidence] = []
    stack: list[tuple[Any, list[str | int]]] = [(document, [])]
    while stack:
        node, path = stack.pop()
        if len(path) > lim.depth:
            raise LimitExceeded("depth", lim.depth, len(path), f"{where}: {_fmt(path)}" if where else _fmt(path),
                                what="nesting depth")
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and len(key) > lim.name_chars:
                    located = _fmt([*path, key[:40] + "…"])
                    raise LimitExceeded("name_chars", lim.name_chars, len(key), f"{where}: {located}" if where
                                        else located, what="a name's length in characters")
                stack.append((value, [*path, key]))
        elif isinstance(node, list):
            if len(node) > lim.list_items:
                located = _fmt(path)
                raise LimitExceeded("list_items", lim.list_items, len(node), f"{where}: {located}" if where
                                    else located, what="a list's length")
            stack.extend((value, [*path, i]) for i, value in enumerate(node))
        elif isinstance(node, str):
            if len(node) > lim.string_chars:
                located = _fmt(path)
                raise LimitExceeded("string_chars", lim.string_chars, len(node), f"{where}: {located}" if where
                                    else located, what="a string's length in characters")
        elif isinstance(node, int | float) and not isinstance(node, bool):
            ev = _number_evidence(node, path, where)
            if ev is not None:
                bad.append(ev)
    if bad:
        bad.sort(key=lambda e: e.location or "")
        raise NumberOutOfRange(bad)


def check_count(limit: str, size: int, where: str | None, what: str) -> None:
    """Raise :class:`LimitExceeded` when ``size`` is over the named limit."""
    allowed = getattr(current_limits(), limit)
    if size > allowed:
        raise LimitExceeded(limit, allowed, size, where, what=what)
