"""The exact value of a typed expression, as the generated C computes it: the predictor's arithmetic.

Values are Python ints (wrapped to their type), floats (rounded to single precision), bools, state
numbers and lists of byte values; :data:`UNKNOWN` stands for a value the plan does not determine (a
sensor reading, a received byte): anything computed from it is unknown too, except where C would not
look at it (``false and x``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.functions import FUNCTIONS
from rac_fw.domains.firmware.plan.behaviour.types import VType, f32, int_range, trunc_div, trunc_mod, wrap


class _Unknown:
    """A value the plan does not determine (one instance: copies of a predictor's state keep it, so ``is
    UNKNOWN`` holds in a forked branch too)."""

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __copy__(self) -> _Unknown:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Unknown:
        return self


UNKNOWN: Any = _Unknown()

Lookup = Callable[[ir.Symbol, bool], Any]
"""``lookup(symbol, whole)``: a symbol's current value; with ``whole``, a window variable's list of samples."""


def to_type(value: Any, t: VType) -> Any:
    """``value`` converted to ``t`` as C's conversion does (floats to integers saturate; NaN gives 0)."""
    if value is UNKNOWN:
        return UNKNOWN
    if t.kind == "float":
        return f32(float(value))
    if t.kind == "int":
        if isinstance(value, float):
            if math.isnan(value):
                return 0
            lo, hi = int_range(t)
            return max(lo, min(hi, int(value))) if math.isfinite(value) else (hi if value > 0 else lo)
        return wrap(int(value), t)
    if t.kind == "bool":
        return bool(value)
    return value


def _arith(op: str, a: Any, b: Any, t: VType) -> Any:
    if t.kind == "float":
        if op == "/":
            if b == 0:
                return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
            return f32(a / b)
        return f32({"+": a + b, "-": a - b, "*": a * b}[op])
    if op == "/":
        return wrap(trunc_div(a, b), t)
    if op == "%":
        return wrap(trunc_mod(a, b), t)
    if op == "<<":
        return wrap(a << (b & (t.bits - 1)), t)
    if op == ">>":
        return wrap(a >> (b & (t.bits - 1)), t)
    return wrap({"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op], t)


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}  # fmt: skip


def evaluate(e: ir.TExpr, lookup: Lookup) -> Any:
    """The value of ``e`` (or :data:`UNKNOWN`)."""
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.Ref):
        return lookup(e.symbol, False)
    if isinstance(e, ir.Convert):
        value = evaluate(e.operand, lookup)
        if value is UNKNOWN:
            return UNKNOWN
        converted = to_type(value, e.type)
        return to_type(converted * e.factor, e.type) if e.factor != 1 else converted
    if isinstance(e, ir.Unary):
        value = evaluate(e.operand, lookup)
        if value is UNKNOWN:
            return UNKNOWN
        if e.op == "not":
            return not value
        if e.op == "~":
            return wrap(~to_type(value, e.type), e.type)
        return f32(-value) if e.type.kind == "float" else wrap(-to_type(value, e.type), e.type)
    if isinstance(e, ir.Binary):
        return _binary(e, lookup)
    if isinstance(e, ir.Call):
        function = FUNCTIONS[e.function]
        values = [lookup(a.symbol, True) if kind == "window" and isinstance(a, ir.Ref) else evaluate(a, lookup)
                  for kind, a in zip(function.args, e.args, strict=True)]  # fmt: skip
        if any(v is UNKNOWN for v in values) or any(isinstance(v, list) and UNKNOWN in v for v in values):
            return UNKNOWN
        return to_type(function.evaluate(values, e.type), e.type)
    if isinstance(e, ir.Index):
        data, index = evaluate(e.base, lookup), evaluate(e.index, lookup)
        if data is UNKNOWN or index is UNKNOWN:
            return UNKNOWN
        return data[index] if 0 <= index < len(data) else 0
    raise TypeError(f"cannot evaluate {e!r}")


def _binary(e: ir.Binary, lookup: Lookup) -> Any:
    left = evaluate(e.left, lookup)
    if e.op in ("and", "or"):
        if left is not UNKNOWN and bool(left) == (e.op == "or"):
            return bool(left)
        right = evaluate(e.right, lookup)
        if left is UNKNOWN:
            if right is not UNKNOWN and bool(right) == (e.op == "or"):
                return bool(right)
            return UNKNOWN
        return right if right is UNKNOWN else bool(right)
    right = evaluate(e.right, lookup)
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    t = e.operands
    if e.op in _COMPARE:
        if t.numeric:
            left, right = to_type(left, t), to_type(right, t)
        return _COMPARE[e.op](left, right)
    return _arith(e.op, to_type(left, t), to_type(right, t), t)


def constant(e: ir.TExpr) -> Any:
    """The value of an expression that reads no name (UNKNOWN when it does)."""

    def no_names(symbol: ir.Symbol, whole: bool) -> Any:
        return UNKNOWN

    return evaluate(e, no_names)
