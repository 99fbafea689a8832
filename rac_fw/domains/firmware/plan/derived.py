"""Plan-wide indexes the obligations read by key, and answers shared within one validation.

Some obligations need to see the whole plan through one question — which claims fall on pin PD12 — and
ask it once per operation. Computed per question that is quadratic; read through a plan view
(``obligations.views``) it would also make every operation's verdict depend on every other operation.
:func:`keyed` turns such a question into an *index* computed once per plan, whose entries are read by
key: under a view the read is recorded as ``("q", index, key)``, so ``obligations.incremental`` re-runs
an obligation only when the entry it read changed (the index itself is recomputed once per candidate and
compared entry by entry). :func:`shared` memoizes a function of immutable plan objects (an operation, the
resources, the target) for the length of one :func:`validation`, so recomputing an index after a patch
only recomputes the patched operation's part.

This module imports nothing of the plan model, so op helpers (``claims``) can use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, Protocol, TypeVar

K = TypeVar("K")
V = TypeVar("V")
Index = Callable[[Any, Any], Mapping[Any, Any]]
Update = Callable[[Any, Any, Any, set[tuple[Any, ...]]], Mapping[Any, Any] | None]
"""``update(value, plan, target, writes)``: the index of ``plan`` from ``value``, another plan's index, given
what differs between them (``obligations.views.writes``; ``("shift", position, step)`` when one operation was
removed (-1) or inserted (+1) there and the others moved), or None when it must be rebuilt."""


class Reader(Protocol):
    """A plan view that records reads (``obligations.views.PlanView``)."""

    def read_index(self, name: str, index: Index, target: Any) -> Mapping[Any, Any]: ...


#: Every keyed index, by name (what ``obligations.incremental`` computes per plan and compares).
INDEXES: dict[str, Index] = {}
#: The indexes that can be brought up to date for changed operations without rebuilding them.
UPDATES: dict[str, Update] = {}
_PREPARED: ContextVar[dict[tuple[str, int], Mapping[Any, Any]] | None] = ContextVar("prepared", default=None)
_SHARED: ContextVar[dict[Any, Any] | None] = ContextVar("shared", default=None)


def keyed(
    update: Update | None = None,
) -> Callable[[Callable[[Any, Any], Mapping[K, V]]], Callable[[Any, Any], Mapping[K, V]]]:
    """Declare ``fn(plan, target)`` a plan-wide index read by key (see the module); ``update`` brings one
    plan's index to another's when only some operations differ (else it is rebuilt)."""

    def declare(fn: Callable[[Any, Any], Mapping[K, V]]) -> Callable[[Any, Any], Mapping[K, V]]:
        index = _declare(fn)
        if update is not None:
            UPDATES[f"{fn.__module__}.{fn.__qualname__}"] = update
        return index

    return declare


def _declare(fn: Callable[[Any, Any], Mapping[K, V]]) -> Callable[[Any, Any], Mapping[K, V]]:
    name = f"{fn.__module__}.{fn.__qualname__}"

    @wraps(fn)
    def index(plan: Any, target: Any) -> Mapping[K, V]:
        reader = getattr(type(plan), "read_index", None)
        if reader is not None:
            return reader(plan, name, fn, target)
        value = prepared_value(name, plan)
        return once(plan, target) if value is None else value

    once = shared(fn)
    INDEXES[name] = fn
    return index


def prepared_value(name: str, plan: Any) -> Mapping[Any, Any] | None:
    """The value of index ``name`` prepared for ``plan`` (None when none is)."""
    table = _PREPARED.get()
    return None if table is None else table.get((name, id(plan)))


@contextmanager
def prepared(values: Mapping[tuple[str, int], Mapping[Any, Any]]) -> Iterator[None]:
    """Serve these index values ((index name, id(plan)) → value) to :func:`keyed` callers inside."""
    token = _PREPARED.set({**(_PREPARED.get() or {}), **values})
    try:
        yield
    finally:
        _PREPARED.reset(token)


def shared(fn: Callable[..., V]) -> Callable[..., V]:
    """Memoize ``fn`` over the identities of its (immutable) arguments inside one :func:`validation`."""

    @wraps(fn)
    def memoized(*args: Any) -> V:
        table = _SHARED.get()
        if table is None:
            return fn(*args)
        slot = (fn, *map(_identity, args))
        if slot not in table:
            table[slot] = (fn(*args), args)  # the arguments are kept alive: their ids stay theirs
        result: V = table[slot][0]
        return result

    return memoized


def _identity(value: Any) -> Any:
    """A memo key part: scalars by value (an int subclass as its plain value, unnoted: the key says nothing to
    an obligation), tuples item by item, anything else by identity."""
    if isinstance(value, int):
        return int.__int__(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, tuple):
        return tuple(map(_identity, value))
    return id(value)


@contextmanager
def validation() -> Iterator[None]:
    """One validation's scope for :func:`shared` answers (nested scopes share the outer one)."""
    if _SHARED.get() is not None:
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)
