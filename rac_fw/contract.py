"""The relational agent contract: the messages exchanged in one turn, for every domain.

An agent *observes* a task, *acts* by submitting a bundle of commitments, a deterministic realizer
turns the action into an artifact plus a *receipt* (what it claims to have realized), an independent
verifier judges the artifact and emits *verdicts*, and every failure becomes *evidence* the agent can
repair from. These types are the stable wire format (pydantic v2, JSON round-trip) shared by the CLI,
the trace files and the MCP server; domain-specific content lives in the ``data``/``payload`` fields.
"""

from __future__ import annotations

import copy
import hashlib
import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: Version of the JSON shape of these messages (``rac-fw schema feedback`` publishes it).
PROTOCOL_VERSION = "1.0"


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Observation(_Message):
    """What the agent may know about a task: the facts it must plan against, never the answer."""

    domain: str
    task: str
    summary: str = Field(description="One-paragraph human/agent readable description of the task.")
    data: dict[str, Any] = Field(default_factory=dict, description="Domain-specific typed facts.")


class Action(_Message):
    """A bundle of commitments an agent submits for one task; the domain's schema types ``payload``."""

    domain: str
    task: str
    payload: dict[str, Any]


class Receipt(_Message):
    """What the realizer *claims* it realized. The verifier never trusts it; it is kept as evidence."""

    realized: list[str] = Field(default_factory=list, description="Relations the realizer claims to hold.")
    claims_success: bool = True
    notes: list[str] = Field(default_factory=list)
    bindings: list[str] = Field(
        default_factory=list,
        description="Every plan name the realizer bound, and to what (``operations[0].led led1 → …``).",
    )
    trace: list[dict[str, Any]] | None = Field(
        default=None,
        description="What the artifact will print, in order, predicted from the action alone (firmware: the "
        "console lines from boot to done, each a regex; repeat/choice/open items where the action leaves it open).",
    )


class Realization(_Message):
    """The artifact produced from an action plus the realizer's receipt."""

    artifact: dict[str, Any] = Field(description="The produced artifact (JSON-able, or a file index).")
    artifact_hash: str = Field(description="sha256 of the canonical JSON of ``artifact``.")
    receipt: Receipt = Field(default_factory=Receipt)
    seed: int = 0


class Verdict(_Message):
    """One judged predicate: what was measured, against which limit, and whether it held."""

    predicate: str
    passed: bool
    measured: float | int | str | None = None
    limit: float | int | str | None = None
    unit: str | None = None
    detail: str | None = None


class Magnitude(_Message):
    """How far a violation is from being satisfied, with a unit (bytes, Hz, %, ms, rows …)."""

    name: str
    value: float | int
    unit: str


class Relaxation(_Message):
    """An admissible change to the action that removes the violation, computed from the facts.

    ``patch`` is a machine-applicable edit: a list of ``{"op": "replace"|"add"|"remove", "path": [...],
    "value": ...}`` steps over the action payload (JSON-pointer-like path as a list of keys/indices).
    """

    description: str
    patch: list[dict[str, Any]] = Field(default_factory=list)

    def apply(self, payload: Any) -> Any:
        """Return a copy of ``payload`` with this relaxation's patch applied (the input is not changed)."""
        return apply_patch(payload, self.patch)


class Evidence(_Message):
    """Repair evidence: a failure type, the named objects in conflict, magnitudes and relaxations."""

    code: str = Field(description="Stable failure type, e.g. E_PIN_CONFLICT or E_TRUTH_TABLE.")
    message: str
    location: str | None = Field(default=None, description="Where: file and/or field path in the action.")
    objects: list[str] = Field(default_factory=list)
    magnitudes: list[Magnitude] = Field(default_factory=list)
    relaxations: list[Relaxation] = Field(default_factory=list)


class Status(StrEnum):
    """Outcome of one turn (``budget``/``closed``: a proposal after the episode ended, not judged)."""

    PASS = "pass"
    FAIL = "fail"
    INVALID = "invalid"
    BUDGET = "budget"
    CLOSED = "closed"  #: the episode already passed; a later proposal is not judged


class Feedback(_Message):
    """What the agent gets back after a turn: verdicts, evidence, and the next observation."""

    protocol: str = PROTOCOL_VERSION
    domain: str
    task: str
    turn: int = 1
    status: Status
    verdicts: list[Verdict] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    artifact_hash: str | None = None
    observation: Observation | None = None


def evidence_from_validation_error(
    exc: ValidationError, prefix: str = "", source: str | None = None, code: str = "E_SCHEMA"
) -> list[Evidence]:
    """One located Evidence per pydantic error: the field path (``payload.outputs.sum[2]``) and what
    was expected, so a malformed action is answered with where and why, never a traceback."""
    out = []
    for err in exc.errors():
        path = prefix
        for part in err["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        location = f"{source}: {path}" if source else path
        got = err.get("input")
        shown = json.dumps(got)[:80] if isinstance(got, str | int | float | bool | None) else type(got).__name__
        out.append(Evidence(code=code, message=f"{path or '<root>'}: {err['msg']} (got {shown})", location=location))
    return out


#: The contract's own messages, by the name ``rac-fw schema NAME`` publishes them under.
MESSAGES: dict[str, type[BaseModel]] = {"feedback": Feedback, "observation": Observation, "action": Action}


def canonical_json(value: Any) -> str:
    """Serialize deterministically: sorted keys, no whitespace, so hashes are stable across runs."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_of(value: Any) -> str:
    """Hash of the canonical JSON of ``value``; used for artifact identity and trace divergence."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


class PatchError(ValueError):
    """A patch step does not fit the document (missing container, bad index, unknown op)."""


def apply_patch(document: Any, patch: list[dict[str, Any]]) -> Any:
    """Return a patched deep copy of ``document`` (the input is left untouched).

    Steps are ``{"op": "replace"|"add"|"remove", "path": [...], "value": ...}`` with dict keys and list
    indices from the root. ``add`` on a list index inserts (``-1``, ``"-"`` or the length appends);
    ``add``/``replace`` on a dict key sets it (a typed payload has omitted fields at their default, so
    replacing one the document omits sets it), and ``add`` creates missing intermediate containers;
    ``remove`` deletes a key or item. A step that does not fit raises ``PatchError``, so a stale
    relaxation is never applied silently to the wrong place.
    """
    result = copy.deepcopy(document)
    for step in patch:
        op, path = step.get("op"), list(step.get("path") or [])
        if not path:
            if op != "replace":
                raise PatchError(f"patch step {step!r} has an empty path")
            result = copy.deepcopy(step.get("value"))
            continue
        parent: Any = result
        for index, key in enumerate(path[:-1]):
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                if op != "add" or not isinstance(key, str) or not isinstance(parent, dict):
                    raise PatchError(f"path {path[: index + 1]!r} does not exist") from None
                parent[key] = [] if isinstance(path[index + 1], int) else {}
                parent = parent[key]
        last = path[-1]
        if op == "remove":
            try:
                del parent[last]
            except (KeyError, IndexError, TypeError):
                raise PatchError(f"cannot remove {path!r}: it does not exist") from None
        elif op == "replace" or (op == "add" and isinstance(parent, dict)):
            if op == "replace" and isinstance(parent, list) and not (
                isinstance(last, int) and -len(parent) <= last < len(parent)
            ):
                raise PatchError(f"cannot replace {path!r}: it does not exist")
            parent[last] = copy.deepcopy(step.get("value"))
        elif op == "add" and isinstance(parent, list) and (last == "-" or isinstance(last, int)):
            position = len(parent) if last == "-" or last < 0 else last
            if position > len(parent):
                raise PatchError(f"cannot add at {path!r}: index beyond the end")
            parent.insert(position, copy.deepcopy(step.get("value")))
        else:
            raise PatchError(f"unsupported patch step {step!r}")
    return result
