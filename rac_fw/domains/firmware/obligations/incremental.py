"""Judging relaxation candidates by re-running only the obligations their patch can affect.

A relaxation is a promise (``promise``): applied, the plan validates. Re-validating the whole plan for
every candidate made validation quadratic — n violations, each with a few candidates, each checked over
n operations (64 ``pwm_fixed`` sharing one LED took 50 s). Instead the obligations run once over the
plan as *units* (each shared rule, each op spec check for one operation, the plan-level blocks' checks)
through :mod:`views`, which note what each unit read. A candidate is built with structural sharing
(:func:`candidate`: untouched operations and resources stay the very objects of the plan, only a patched
operation is validated again), :func:`views.writes` says what it changed, and only the units whose reads
meet those changes run again; every other unit keeps its verdict. The candidate's violations are what a
full re-validation would find — the reads are recorded, not declared, and anything read through a method
counts as read whole — at the cost of the units it touches.

Candidates that change what every unit takes as an argument (the framework, the target) or the plan's
top-level shape are judged by a full run; identical patches are judged once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from rac_fw.contract import Evidence, PatchError
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations.views import (
    ALL,
    LENGTH,
    PlanView,
    Position,
    Read,
    index_writes,
    reading,
    shifted,
    unwrap,
    writes,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.derived import INDEXES, UPDATES, prepared
from rac_fw.domains.firmware.plan.evidence import judging
from rac_fw.domains.firmware.plan.load import PlanError, parse_plan
from rac_fw.domains.firmware.plan.model import AnyOperation, Plan
from rac_fw.domains.firmware.plan.resources import Resources
from rac_fw.limits import LimitExceeded, NumberOutOfRange, check_document

Key = tuple[str, frozenset[str]]
UnitRun = Callable[[Plan, Target, str], list[Evidence]]
Unit = tuple[Hashable, UnitRun]
"""A part of the obligations: a stable key and the function judging a plan for that part."""


@dataclass(frozen=True)
class Units:
    """The obligations of a plan as units: those of the plan as a whole, and those of the operation at one
    position (which judge whatever operation the plan they are given holds there)."""

    whole: Callable[[], list[Unit]]
    at: Callable[[int, Operation], list[Unit]]

    def of(self, plan: Plan) -> list[tuple[Unit, int | None]]:
        """Every unit of ``plan`` with its operation's position (None for the plan's own)."""
        found: list[tuple[Unit, int | None]] = [(u, None) for u in self.whole()]
        for index, op in enumerate(plan.operations):
            found += [(u, index) for u in self.at(index, op)]
        return found


@dataclass
class Delta:
    """A candidate's violations as a change to the plan's: what it no longer has, what it has anew."""

    gone: Counter[Key]
    new: Counter[Key]
    left: int
    """How many violations the candidate has in all."""

    def keeps(self, every: Counter[Key], answered: Key) -> bool:
        """Whether the candidate's violations are within the plan's (``every``) less the one it answers."""
        for k in self.new.keys() | {answered}:
            if every[k] - self.gone[k] + self.new[k] > every[k] - (k == answered):
                return False
        return True

_OPERATION: TypeAdapter[Any] = TypeAdapter(AnyOperation)


def key(evidence: Evidence) -> Key:
    """What identifies a violation across a patch: its code and the objects in conflict (locations
    shift when a patch removes an operation, so they are not part of it)."""
    return evidence.code, frozenset(evidence.objects)


# --- candidates with structural sharing ------------------------------------------------------------------
def _patched(document: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """``document`` with ``patch`` applied by the rules of ``contract.apply_patch``, copying only the
    containers on the patched paths (``apply_patch`` copies everything): untouched operations stay the
    same dicts, so :func:`candidate` can keep their parsed objects."""
    root: dict[str, Any] = dict(document)
    fresh: set[int] = {id(root)}

    def own(parent: Any, part: Any) -> Any:
        child = parent[part]
        if isinstance(child, dict | list) and id(child) not in fresh:
            child = dict(child) if isinstance(child, dict) else list(child)
            fresh.add(id(child))
            parent[part] = child
        return child

    for step in patch:
        op, path = step.get("op"), list(step.get("path") or [])
        if not path:
            raise PatchError(f"patch step {step!r} has an empty path")
        parent: Any = root
        for index, part in enumerate(path[:-1]):
            try:
                parent = own(parent, part)
            except (KeyError, IndexError, TypeError):
                if op != "add" or not isinstance(part, str) or not isinstance(parent, dict):
                    raise PatchError(f"path {path[: index + 1]!r} does not exist") from None
                parent[part] = [] if isinstance(path[index + 1], int) else {}
                fresh.add(id(parent[part]))
                parent = parent[part]
        last = path[-1]
        try:
            if op == "remove":
                del parent[last]
            elif op == "replace" or (op == "add" and isinstance(parent, dict)):
                if op == "replace" and isinstance(parent, list) and not (
                    isinstance(last, int) and -len(parent) <= last < len(parent)
                ):
                    raise PatchError(f"cannot replace {path!r}: it does not exist")
                parent[last] = deepcopy(step.get("value"))
            elif op == "add" and isinstance(parent, list) and (last == "-" or isinstance(last, int)):
                position = len(parent) if last == "-" or last < 0 else last
                if position > len(parent):
                    raise PatchError(f"cannot add at {path!r}: index beyond the end")
                parent.insert(position, deepcopy(step.get("value")))
            else:
                raise PatchError(f"unsupported patch step {step!r}")
        except (KeyError, IndexError, TypeError):
            raise PatchError(f"cannot {op} {path!r}: it does not exist") from None
    return root


def candidate(
    plan: Plan, document: dict[str, Any], patch: list[dict[str, Any]], reuse: dict[int, Operation] | None = None
) -> Plan | None:
    """The plan ``patch`` makes of ``document`` (the plan's dict), None when it does not apply or parse.

    Operations and resources the patch leaves alone are the plan's own objects (``reuse``: id of an
    operation's dict in ``document`` → the operation, see :func:`parsed_operations`); a patched operation
    is validated alone, patched resources as a whole; a patch reaching anything else is parsed in full."""
    from rac_fw.contract import apply_patch

    try:
        if document.get("wifi") is True or any(not _local(step) for step in patch):
            return parse_plan(apply_patch(document, patch))  # the author's shorthand is expanded by the parse
        data = _patched(document, patch)
    except (PatchError, PlanError):
        return None
    if reuse is None:
        reuse = parsed_operations(plan, document)
    raw = data.get("operations")
    if not isinstance(raw, list) or not 1 <= len(raw) <= _MAX_OPERATIONS:
        return _full(data)  # an empty or overlong list: the parse decides (a plan of blocks alone is valid)
    operations = [reuse.get(id(item)) for item in raw]
    try:
        for position, known in enumerate(operations):
            if known is None:  # a patched (or added) operation: validated alone, as the parse would
                check_document({"operations": [raw[position]]}, None)
                operations[position] = _OPERATION.validate_python(raw[position])
        update: dict[str, Any] = {"operations": operations}
        if data.get("resources") is not document.get("resources"):
            check_document({"resources": data.get("resources")}, None)
            update["resources"] = Resources.model_validate(data.get("resources") or {})
    except (ValidationError, LimitExceeded, NumberOutOfRange):
        return _full(data)
    return plan.model_copy(update=update)


_MAX_OPERATIONS = 64


def parsed_operations(plan: Plan, document: dict[str, Any]) -> dict[int, Operation]:
    """Each operation dict of ``document`` (by identity) → the plan's parsed operation."""
    return {id(d): op for d, op in zip(document.get("operations") or [], plan.operations, strict=False)}


def _full(data: dict[str, Any]) -> Plan | None:
    """The reference parse for what the shortcut does not decide (it also produces the same refusal)."""
    try:
        return parse_plan(data)
    except PlanError:
        return None


def _local(step: dict[str, Any]) -> bool:
    """Whether a patch step stays inside one operation or the resources (what :func:`candidate` rebuilds)."""
    path = list(step.get("path") or [])
    if len(path) >= 2 and path[0] == "resources":
        return True
    return len(path) >= 2 and path[0] == "operations" and isinstance(path[1], int | str)


# --- units and their reads -------------------------------------------------------------------------------
class _Readers:
    """Which units (or indexes) read what, answering which of them a set of writes meets."""

    def __init__(self) -> None:
        self.by_read: dict[Read, set[Hashable]] = {}
        self.by_position: dict[int, set[Hashable]] = {}
        self.whole: set[Hashable] = set()
        """Readers of the whole plan (``("p", "*")``): any change meets them."""

    def add(self, reader: Hashable, reads: set[Read]) -> None:
        for read in reads:
            self.by_read.setdefault(read, set()).add(reader)
            if read[0] == "o" and isinstance(read[1], int):
                self.by_position.setdefault(read[1], set()).add(reader)
        if ("p", ALL) in reads:
            self.whole.add(reader)

    def met(self, changed: set[Read]) -> set[Hashable]:
        """The readers whose reads meet ``changed`` (the keys of ``views.writes`` and ``index_writes``)."""
        if not changed:
            return set()
        hit = set(self.whole)
        get = self.by_read.get
        for write in changed:
            kind = write[0]
            if kind == "o" and len(write) == 2 and isinstance(write[1], int):
                hit |= self.by_position.get(write[1], set())  # another operation at this position
            elif kind == "o" and write != LENGTH:
                hit |= get(write, set()) | get(("o", write[1], ALL), set())
            else:
                hit |= get(write, set())
        return hit


class Judge:
    """The plan's obligations as units with their verdicts and reads; judges candidates by difference."""

    def __init__(self, plan: Plan, target: Target, framework: str, units: Units):
        self.plan, self.target, self.framework, self.units = plan, target, framework, units
        self.indexes: dict[str, Mapping[Any, Any]] = {}
        self.index_readers = _Readers()
        for name, index in INDEXES.items():
            log: set[Read] = set()
            self.indexes[name] = index(PlanView(plan, log), target)
            self.index_readers.add(name, log)
        self.verdicts: dict[Hashable, Counter[Key]] = {}
        self.runs: dict[Hashable, UnitRun] = {}
        self.at: dict[int, list[Hashable]] = {}
        self.position: dict[Hashable, int] = {}
        self.readers = _Readers()
        whole: list[tuple[Unit, int | None]] = [(u, None) for u in units.whole()]
        per_op = [(u, p) for p, op in enumerate(plan.operations) for u in units.at(Position(p), op)]
        with judging(), prepared({(name, id(plan)): value for name, value in self.indexes.items()}):
            for (unit, run), position in whole + per_op:
                unit = _plain(unit)
                log = set()
                with reading(log):
                    found = run(PlanView(plan, log), target, framework)  # type: ignore[arg-type]
                    self.verdicts[unit] = Counter(key(e) for e in found)
                self.runs[unit] = run
                self.readers.add(unit, log)
                if position is not None:
                    self.at.setdefault(position, []).append(unit)
                    self.position[unit] = position
        self.count = sum(self.total().values())

    def total(self) -> Counter[Key]:
        """Every unit's violations of the plan itself."""
        found: Counter[Key] = Counter()
        for keys in self.verdicts.values():
            found.update(keys)
        return found

    def delta(self, patched: Plan) -> Delta:
        """The violations of ``patched`` (a candidate sharing the plan's untouched objects), as a change.

        When the candidate removes or inserts one operation (``views.shifted``), the operations after it keep
        their verdicts at their new positions unless an obligation read what moved (the removed operation,
        the number of operations) or used its position; otherwise positions are compared one by one."""
        changed = writes(self.plan, patched)
        moved = shifted(self.plan, patched)
        values: dict[tuple[str, int], Mapping[Any, Any]] = {}
        stale = self.index_readers.met(changed)
        for name, before in self.indexes.items():
            after = before
            if name in stale:
                update = UPDATES.get(name)
                told = changed if moved is None else changed | {("shift", *moved)}
                found = update(before, patched, self.target, told) if update is not None else None
                after = found if found is not None else INDEXES[name](patched, self.target)
            changed |= index_writes(name, before, after)
            values[(name, id(patched))] = after
        rerun = self.readers.met(changed)
        gone: Counter[Key] = Counter()
        runs: list[Unit] = []
        if moved is None:
            for write in changed:  # another operation (or none) at a position: its units are others
                if write[0] == "o" and len(write) == 2 and isinstance(write[1], int):
                    position = write[1]
                    for unit in self.at.get(position, ()):
                        rerun.discard(unit)
                        gone.update(self.verdicts[unit])
                    if position < len(patched.operations):
                        runs += self.units.at(position, patched.operations[position])
            runs += [(unit, self.runs[unit]) for unit in rerun]
        else:
            at, step = moved
            for unit in self.at.get(at, ()) if step < 0 else ():
                rerun.discard(unit)  # the removed operation's units
                gone.update(self.verdicts[unit])
            if step > 0:
                runs += self.units.at(at, patched.operations[at])  # the inserted operation's units
            for unit in rerun:
                gone.update(self.verdicts[unit])
                where = self.position.get(unit)
                if where is None:
                    runs.append((unit, self.runs[unit]))
                    continue
                now = where + step if where >= at else where
                runs += [u for u in self.units.at(now, patched.operations[now]) if _moved_key(unit, now) == u[0]]
        new: Counter[Key] = Counter()
        with judging(), prepared(values):
            for unit, run in runs:
                if moved is None:
                    gone.update(self.verdicts.get(unit, ()))
                new.update(key(e) for e in run(patched, self.target, self.framework))
        return Delta(gone, new, self.count - sum(gone.values()) + sum(new.values()))


def _plain(unit: Hashable) -> Hashable:
    """A unit key without :class:`views.Position` values (their uses are reads; a key is not one)."""
    if isinstance(unit, tuple):
        return tuple(int.__int__(p) if isinstance(p, Position) else p for p in unit)
    return unit


def _moved_key(unit: Hashable, position: int) -> Hashable:
    """The key of per-operation unit ``unit`` for its operation at ``position``."""
    assert isinstance(unit, tuple)
    return (unit[0], position, *unit[2:])


__all__ = ["Delta", "Judge", "Units", "candidate", "key", "parsed_operations", "unwrap"]
