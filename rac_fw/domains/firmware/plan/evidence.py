"""Building repair evidence: a located violation with magnitudes and patch-carrying relaxations.

Obligation modules describe *what* is wrong in plan terms (a field path as a list, the objects in
conflict, magnitudes with units) and *how* to fix it (a patch over the plan dict); this module turns
that into the contract's :class:`~rac_fw.contract.Evidence`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from rac_fw.contract import Evidence, Magnitude, Relaxation
from rac_fw.domains.firmware.plan.derived import shared
from rac_fw.domains.firmware.plan.paths import PathPart, format_path

Path = list[PathPart]

_PROPOSING: ContextVar[bool] = ContextVar("proposing", default=True)


def proposing() -> bool:
    """Whether the obligations now running are asked for relaxations. While a relaxation candidate is
    judged only its violations matter (``obligations.incremental``), so a rule may skip computing costly
    relaxations (free pins, reachable clocks) when this is False; what it finds must not change."""
    return _PROPOSING.get()


@contextmanager
def judging() -> Iterator[None]:
    """Run obligations for their verdicts only (:func:`proposing` is False inside)."""
    token = _PROPOSING.set(False)
    try:
        yield
    finally:
        _PROPOSING.reset(token)


def replace(path: Path, value: Any) -> dict[str, Any]:
    """Patch step: set the field at ``path`` (present or defaulted) to ``value``."""
    return {"op": "replace", "path": list(path), "value": value}


def add(path: Path, value: Any) -> dict[str, Any]:
    """Patch step: insert ``value`` into a list at ``path`` (index ``-1`` appends) or set a key."""
    return {"op": "add", "path": list(path), "value": value}


def remove(path: Path) -> dict[str, Any]:
    """Patch step: delete the key or list item at ``path``."""
    return {"op": "remove", "path": list(path)}


def relax(description: str, *steps: dict[str, Any]) -> Relaxation:
    """An admissible change, computed from the facts, and the patch that makes it (a placeholder while
    the obligations only judge: see :func:`proposing`)."""
    if not _PROPOSING.get():
        return _UNASKED
    return Relaxation(description=description, patch=list(steps))


_UNASKED = Relaxation(description="(not proposed while judging)", patch=[])


def names_in(value: Any) -> set[str]:
    """Every string in a plan value (an operation's or block's dumped fields): the names it uses."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {s for v in value.values() for s in names_in(v)}
    if isinstance(value, list | tuple):
        return {s for v in value for s in names_in(v)}
    return set()


@shared
def _naming(plan: Any) -> dict[str, set[int]]:
    """Name → the positions of the operations whose fields (other than their own name) hold it."""
    found: dict[str, set[int]] = {}
    for i, o in enumerate(plan.operations):
        for name in names_in(o.model_dump(exclude={"name"})):
            found.setdefault(name, set()).add(i)
    return found


def drop_operation(plan: Any, index: int) -> Relaxation:
    """Drop operation ``index`` together with the operations that name it (a reaction to it, a log of its value),
    which dropping it alone would leave naming nothing."""
    if not _PROPOSING.get():
        return _UNASKED
    op = plan.operations[index]
    label = op.name or f"this {op.op}"
    doomed = {index} | (_naming(plan).get(op.name, set()) if op.name is not None else set())
    also = f" and the {len(doomed) - 1} operation(s) naming it" if len(doomed) > 1 else ""
    return relax(f"drop {label}{also}", *(remove(["operations", i]) for i in sorted(doomed, reverse=True)))


UNUSED = "E_FIELD_UNUSED"


def unused_field(op: Any, path: Path, why: str) -> list[Evidence]:
    """E_FIELD_UNUSED: a field ``op`` (the model holding it) sets to another value than its default although its
    other fields leave it nothing to do (``why``); a field that does nothing is refused, not ignored."""
    name = str(path[-1])
    if getattr(op, name) == op.__class__.model_fields[name].default:
        return []
    return [
        violation(
            UNUSED,
            f"{name} does nothing here: {why}",
            path,
            [name],
            relaxations=[relax(f"drop {name}", remove(path))],
        )
    ]


def measure(name: str, value: float, unit: str) -> Magnitude:
    """A magnitude with its unit; floats are rounded to 4 significant decimals for stable output."""
    return Magnitude(name=name, value=round(value, 4) if isinstance(value, float) else value, unit=unit)


def violation(
    code: str,
    message: str,
    path: Path,
    objects: Sequence[str] = (),
    magnitudes: Sequence[Magnitude] = (),
    relaxations: Sequence[Relaxation] = (),
) -> Evidence:
    """One violated obligation located at the plan field ``path`` (without relaxations while the
    obligations only judge: see :func:`proposing`)."""
    if not _PROPOSING.get():
        return Evidence.model_construct(  # no location: a verdict does not depend on where it is reported
            code=code,
            message=message,
            location=None,
            objects=list(dict.fromkeys(objects)),
            magnitudes=list(magnitudes),
            relaxations=[],
        )
    return Evidence(
        code=code,
        message=message,
        location=format_path(path),
        objects=list(dict.fromkeys(objects)),
        magnitudes=list(magnitudes),
        relaxations=list(relaxations),
    )
