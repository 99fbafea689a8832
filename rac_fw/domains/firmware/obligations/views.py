"""Read-only views of a plan that record what an obligation read, so a change re-runs only what it meets.

An obligation is a function of the plan; which parts of the plan it depends on is whatever it reads.
These views stand in for the :class:`Plan` (and its operation list, operations and resource lists) while
an obligation runs and note each read as a key:

* ``("o", k, field)`` — a field of the operation at position ``k`` (``"*"``: all of it, through a method;
  ``SET``: which of its fields the plan wrote);
  as a write, ``("o", k)`` is another operation (or none) at that position;
* ``("o", "len")`` — how many operations there are (a loop that ran to the end);
* ``("on", name)`` — which operation is called ``name`` (``plan.operation(name)``);
* ``("r", kind, name)`` — the resource ``name`` of ``kind`` (``plan.buffer(name)``…), ``("r", kind, "*")``
  the whole list, ``("r", "*", "*")`` all resources;
* ``("p", field)`` — any other top-level field (``framework``, ``heap_bytes``, a plan-level block);
* ``("q", index, key)`` — an entry of a plan-wide index (``plan.derived.keyed``: the claims on one pin).

:func:`writes` states what a changed plan changed in the same keys, so ``incremental`` re-runs exactly
the obligations whose reads it meets. The views pass ``isinstance`` as the objects they wrap, return the
same view for the same position (``is`` holds), and anything read through a method counts as reading
the whole object: over-approximating a read only costs a re-run, never a wrong verdict.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.derived import Index, prepared_value
from rac_fw.domains.firmware.plan.model import Plan

Read = tuple[Any, ...]
ALL = "*"
SET = "fields set"
LENGTH = ("o", "len")
RESOURCE_KINDS = ("buffers", "pins", "devices", "threads", "keys")
#: Class-level facts of a model, the same for every value of it (reading them reads no field).
_METADATA = frozenset({"model_fields", "model_config", "model_computed_fields", "model_json_schema"})
_LOOKUPS = {"buffer": "buffers", "pin_use": "pins", "device": "devices", "thread": "threads"}


def unwrap(value: Any) -> Any:
    """The plan object behind a view (the value itself when it is none)."""
    return object.__getattribute__(value, "_real") if isinstance(value, _View) else value


class _View:
    """Base of the views: the wrapped object, the read log."""

    __slots__ = ("_real", "_log")

    def __init__(self, real: Any, log: set[Read]):
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_log", log)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("plan views are read-only")

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(view, Plan) holds
        return type(object.__getattribute__(self, "_real"))

    def __repr__(self) -> str:
        return repr(object.__getattribute__(self, "_real"))


class OperationView(_View):
    """One operation at a position: each field read is ``("o", position, field)``."""

    __slots__ = ("_position",)

    def __init__(self, real: Operation, log: set[Read], position: int):
        super().__init__(real, log)
        object.__setattr__(self, "_position", position)

    def _note(self, field: str) -> None:
        object.__getattribute__(self, "_log").add(("o", object.__getattribute__(self, "_position"), field))

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(op, CoreClock): reads which kind of operation is there
        self._note("op")
        return type(object.__getattribute__(self, "_real"))

    def __getattr__(self, name: str) -> Any:
        real = object.__getattribute__(self, "_real")
        kind = type(real)
        if name in kind.model_fields or not hasattr(kind, name):
            self._note(name)  # a field, or one this kind lacks (``getattr(op, "channels", None)``)
        elif name == "model_fields_set":
            self._note(SET)  # which fields the plan wrote (a field refused only when written)
        elif name not in _METADATA:
            self._note(ALL)  # a method or property (``model_dump``): it may read any field
        return getattr(real, name)

    def __eq__(self, other: object) -> bool:
        self._note(ALL)
        return bool(object.__getattribute__(self, "_real") == unwrap(other))

    def __hash__(self) -> int:
        return id(object.__getattribute__(self, "_real"))


class OperationsView(_View):
    """The operation list: positions are views; running to its end (or asking its length) reads its length."""

    __slots__ = ("_views",)

    def __init__(self, real: list[Operation], log: set[Read]):
        super().__init__(real, log)
        object.__setattr__(self, "_views", {})

    def _at(self, position: int) -> OperationView:
        views: dict[int, OperationView] = object.__getattribute__(self, "_views")
        found = views.get(position)
        if found is None:
            real = object.__getattribute__(self, "_real")
            found = views[position] = OperationView(real[position], object.__getattribute__(self, "_log"), position)
        return found

    def _length(self) -> int:
        object.__getattribute__(self, "_log").add(LENGTH)
        return len(object.__getattribute__(self, "_real"))

    def __len__(self) -> int:
        return self._length()

    def __bool__(self) -> bool:
        return self._length() > 0

    def __iter__(self) -> Iterator[OperationView]:
        real = object.__getattribute__(self, "_real")
        log = object.__getattribute__(self, "_log")
        for position in range(len(real)):
            log.add(("o", position, "op"))  # passing a position reads that something is there
            yield self._at(position)
        object.__getattribute__(self, "_log").add(LENGTH)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return [self._at(p) for p in range(*key.indices(self._length()))]
        if type(key) is Position:  # an obligation fetching its own operation: no use of where it is
            return self._at(int.__int__(key))
        position = key.__index__()
        if position < 0:
            position += self._length()
        if not 0 <= position < len(object.__getattribute__(self, "_real")):
            self._length()
        return self._at(position)

    def __getattr__(self, name: str) -> Any:  # index, count, …: everything was read
        log = object.__getattribute__(self, "_log")
        real = object.__getattribute__(self, "_real")
        log.add(LENGTH)
        log.update(("o", p, ALL) for p in range(len(real)))
        method = getattr(real, name)
        return lambda *args: method(*(unwrap(a) for a in args))

    def __contains__(self, item: object) -> bool:
        return bool(self.__getattr__("__contains__")(item))


class ListView(_View):
    """One resource list: reading it at all reads ``("r", kind, "*")``; items are returned as they are."""

    __slots__ = ("_kind",)

    def __init__(self, real: list[Any], log: set[Read], kind: str):
        super().__init__(real, log)
        object.__setattr__(self, "_kind", kind)

    def _real_list(self) -> list[Any]:
        object.__getattribute__(self, "_log").add(("r", object.__getattribute__(self, "_kind"), ALL))
        real: list[Any] = object.__getattribute__(self, "_real")
        return real

    def __len__(self) -> int:
        return len(self._real_list())

    def __bool__(self) -> bool:
        return bool(self._real_list())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._real_list())

    def __getitem__(self, key: Any) -> Any:
        return self._real_list()[key]

    def __contains__(self, item: object) -> bool:
        return item in self._real_list()

    def __eq__(self, other: object) -> bool:
        return self._real_list() == unwrap(other)

    def __hash__(self) -> int:
        return id(object.__getattribute__(self, "_real"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real_list(), name)


class ResourcesView(_View):
    """``plan.resources``: each list is a :class:`ListView`; anything else reads every resource."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        real = object.__getattribute__(self, "_real")
        log = object.__getattribute__(self, "_log")
        if name in RESOURCE_KINDS:
            return ListView(getattr(real, name), log, name)
        log.add(("r", ALL, ALL))
        return getattr(real, name)


class PlanView(_View):
    """The plan an obligation sees while its reads are recorded."""

    __slots__ = ("_operations",)

    def __init__(self, real: Plan, log: set[Read]):
        super().__init__(real, log)
        object.__setattr__(self, "_operations", OperationsView(real.operations, log))

    def operation_at(self, position: int) -> OperationView:
        """The view of the operation at ``position`` (what a per-operation obligation receives)."""
        ops: OperationsView = object.__getattribute__(self, "_operations")
        return ops._at(position)

    def __getattr__(self, name: str) -> Any:
        real: Plan = object.__getattribute__(self, "_real")
        log: set[Read] = object.__getattribute__(self, "_log")
        if name == "operations":
            return object.__getattribute__(self, "_operations")
        if name == "resources":
            return ResourcesView(real.resources, log)
        if name in _LOOKUPS:
            kind, find = _LOOKUPS[name], getattr(real, name)

            def lookup(key: str) -> Any:
                log.add(("r", kind, key))
                return find(key)

            return lookup
        if name == "operation":
            return self._operation
        if name == "indexed":
            return lambda *ops: Plan.indexed(self, *ops)  # type: ignore[arg-type]
        if name in Plan.model_fields:
            log.add(("p", name))
            return getattr(real, name)
        log.update((("p", ALL), ("r", ALL, ALL), LENGTH))  # a method of the whole plan: everything
        log.update(("o", p, ALL) for p in range(len(real.operations)))
        return getattr(real, name)

    def read_index(self, name: str, index: Index, target: Any) -> Mapping[Any, Any]:
        """A keyed index (``plan.derived.keyed``) of this plan, read entry by entry: ``("q", name, key)``.
        Served from the value prepared for the plan; otherwise computed through this view (every read
        it makes is then this unit's)."""
        real: Plan = object.__getattribute__(self, "_real")
        log: set[Read] = object.__getattribute__(self, "_log")
        value = prepared_value(name, real)
        if value is None:
            return index(self, target)
        return KeyedView(value, log, name)

    def _operation(self, name: str) -> OperationView | None:
        real: Plan = object.__getattribute__(self, "_real")
        object.__getattribute__(self, "_log").add(("on", name))
        for position, op in enumerate(real.operations):
            if op.name == name:
                return self.operation_at(position)
        return None


class KeyedView(Mapping[Any, Any]):
    """An index's entries, each read noted as ``("q", index, key)`` (iterating it reads them all)."""

    def __init__(self, value: Mapping[Any, Any], log: set[Read], name: str):
        self._value, self._log, self._name = value, log, name

    def __getitem__(self, key: Any) -> Any:
        self._log.add(("q", self._name, key))
        return self._value[key]

    def __iter__(self) -> Iterator[Any]:
        self._log.add(("q", self._name, ALL))
        return iter(self._value)

    def __len__(self) -> int:
        self._log.add(("q", self._name, ALL))
        return len(self._value)


def index_writes(name: str, before: Mapping[Any, Any], after: Mapping[Any, Any]) -> set[Read]:
    """The entries of index ``name`` that differ between two plans (and ``ALL`` when any does). An index brought
    up to date from the other (``plan.derived.keyed(update=…)``) may say which entries it touched (``changed``);
    only those are compared."""
    if before is after:
        return set()
    keys = getattr(after, "changed", None)
    if keys is None:
        keys = before.keys() | after.keys()
    found: set[Read] = {("q", name, k) for k in keys if _differs(before.get(k), after.get(k))}
    return found | {("q", name, ALL)} if found else found


def _differs(before: Any, after: Any) -> bool:
    return before is not after and before != after


_CURRENT: ContextVar[set[Read] | None] = ContextVar("current_reads", default=None)


@contextmanager
def reading(log: set[Read]) -> Iterator[None]:
    """Record the uses of :class:`Position` values into ``log`` while inside."""
    token = _CURRENT.set(log)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class Position(int):
    """An operation's position handed to the obligations judging it, noting ``("i", position)`` when the
    value is used for anything (formatted, compared, hashed, indexed with, computed with): an obligation
    that only puts it into a path (a location, a patch) gives the same verdict at any position, so when an
    operation before it is removed its verdict moves with it (``incremental.Judge``)."""

    def _use(self) -> int:
        log = _CURRENT.get()
        if log is not None:
            log.add(("i", int.__int__(self)))
        return int.__int__(self)


def _noting(name: str) -> Any:
    method = getattr(int, name)

    def noted(self: Position, *args: Any) -> Any:
        return method(self._use(), *args)

    noted.__name__ = name
    return noted


for _name in (
    "__abs__", "__add__", "__and__", "__bool__", "__ceil__", "__divmod__", "__eq__", "__float__", "__floor__",
    "__floordiv__", "__format__", "__ge__", "__gt__", "__hash__", "__index__", "__int__", "__invert__", "__le__",
    "__lshift__", "__lt__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__", "__pow__", "__radd__",
    "__rand__", "__rdivmod__", "__repr__", "__rfloordiv__", "__rlshift__", "__rmod__", "__rmul__", "__ror__",
    "__round__", "__rpow__", "__rrshift__", "__rshift__", "__rsub__", "__rtruediv__", "__rxor__", "__str__",
    "__sub__", "__truediv__", "__trunc__", "__xor__", "as_integer_ratio", "bit_count", "bit_length", "conjugate",
    "to_bytes",
):
    setattr(Position, _name, _noting(_name))


def shifted(before: Plan, after: Plan) -> tuple[int, int] | None:
    """``(position, step)`` when ``after``'s operations are ``before``'s with one removed (step -1) or one
    inserted (step +1) at ``position``, the others the very same objects; None otherwise."""
    old, new = before.operations, after.operations
    if abs(len(old) - len(new)) != 1:
        return None
    shorter = min(len(old), len(new))
    head = next((i for i in range(shorter) if old[i] is not new[i]), shorter)
    tail = next((i for i in range(shorter - head) if old[-1 - i] is not new[-1 - i]), shorter - head)
    if head + tail != shorter:
        return None
    return head, (1 if len(new) > len(old) else -1)


def writes(before: Plan, after: Plan) -> set[Read]:
    """What ``after`` changed relative to ``before``, in the keys the views record (see the module). An
    operation removed or inserted (:func:`shifted`) is that position and the positions after it, whose
    operations keep their reads but not their positions (``("i", p)``)."""
    found = _plan_writes(before, after)
    moved = shifted(before, after)
    if moved is None:
        return found | _operation_writes(before, after)
    at, step = moved
    old, new = before.operations, after.operations
    gone_or_new = old[at] if step < 0 else new[at]
    found |= {LENGTH, ("o", at)} | {("i", p) for p in range(at, len(old))}
    if gone_or_new.name is not None:
        found.add(("on", gone_or_new.name))
    return found


def _plan_writes(before: Plan, after: Plan) -> set[Read]:
    found: set[Read] = set()
    for name in Plan.model_fields:
        if name in ("operations", "resources"):
            continue
        if _differs(getattr(before, name), getattr(after, name)):
            found.add(("p", name))
    if before.resources is not after.resources:
        for kind in RESOURCE_KINDS:
            old, new = getattr(before.resources, kind), getattr(after.resources, kind)
            if old is new or old == new:
                continue
            found |= {("r", kind, ALL), ("r", ALL, ALL)}
            olds = {item.name: item for item in old}
            news = {item.name: item for item in new}
            found |= {("r", kind, n) for n in olds.keys() | news.keys() if _differs(olds.get(n), news.get(n))}
    return found


def _operation_writes(before: Plan, after: Plan) -> set[Read]:
    """Position by position: another operation, or the fields of the same kind that differ."""
    found: set[Read] = set()
    old_ops, new_ops = before.operations, after.operations
    if len(old_ops) != len(new_ops):
        found.add(LENGTH)
    pairs: list[tuple[Operation | None, Operation | None]] = list(zip(old_ops, new_ops, strict=False))
    pairs += [(o, None) for o in old_ops[len(pairs) :]] + [(None, n) for n in new_ops[len(pairs) :]]
    for position, (old, new) in enumerate(pairs):
        if old is new:
            continue
        if old is None or new is None or old.name != new.name:
            found |= {("on", op.name) for op in (old, new) if op is not None and op.name is not None}
        if old is None or new is None or type(old) is not type(new):
            found.add(("o", position))  # another operation (or none) at this position: every read of it
            continue
        found |= {("o", position, f) for f in type(old).model_fields if _differs(getattr(old, f), getattr(new, f))}
        if old.model_fields_set != new.model_fields_set:
            found.add(("o", position, SET))
    return found
