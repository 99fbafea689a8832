"""Answers derived from one target's facts, computed once per target object.

A ``Target`` is immutable and ``load_target`` keeps one per id for the life of the process, so a pure
question over it (the PLL setting for a frequency, the clocks a request sets) has one answer; rules and
relaxation candidates ask the same questions many times per plan. ``per_target`` memoizes on the target
object's identity (a ``Target`` holds dicts, so it is not hashable) and forgets the answers when the
target is collected, so a target built by a test never sees another's.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from functools import wraps
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


def per_target(fn: F) -> F:
    """``fn(target, *args)`` memoized per target object and hashable positional ``args``."""
    table: dict[int, dict[tuple[Hashable, ...], Any]] = {}

    @wraps(fn)
    def memoized(target: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return fn(target, *args, **kwargs)
        key = id(target)
        memo = table.get(key)
        if memo is None:
            memo = table[key] = {}
            weakref.finalize(target, table.pop, key, None)
        try:
            return memo[args]
        except KeyError:
            memo[args] = found = fn(target, *args)
            return found

    return cast(F, memoized)
