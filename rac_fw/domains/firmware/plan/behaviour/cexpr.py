"""Typed expressions written as C: the one place expression semantics become C text, for every framework.

The C computes exactly what ``evaluate`` computes: integer arithmetic through the unsigned type of the
operation's width (wrap-around, never signed-overflow UB), division and remainder by zero give 0 (helpers),
shift amounts masked to the width, integer comparisons widened to 64 bits, float-to-integer conversions
saturating (helpers). Names become the C identifiers the compiler chose; how a shared variable or an
operation's output is read is the caller's ``access`` function (atomics, the op's view).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.functions import FUNCTIONS
from rac_fw.domains.firmware.plan.behaviour.types import VType

Access = Callable[[ir.Symbol, bool], str]
"""``access(symbol, whole)``: the C expression reading a name (``whole``: a window variable's window struct)."""


def suffix(t: VType) -> str:
    """The helper-name suffix of a type: ``i32``, ``u32``, ``f32``, ``i64``."""
    if t.kind == "float":
        return "f32"
    if t.kind == "int":
        return f"{'i' if t.signed else 'u'}{max(t.bits, 32)}"
    return "u32"


def literal(value: object, t: VType) -> str:
    """A C literal of type ``t``."""
    if t.kind == "bool":
        return "true" if value else "false"
    if t.kind == "float":
        number = float(value)  # type: ignore[arg-type]
        if math.isnan(number):
            return "(0.0f / 0.0f)"
        if math.isinf(number):
            return "(1.0f / 0.0f)" if number > 0 else "(-1.0f / 0.0f)"
        return f"{number!r}f"
    if t.kind == "int":
        v = int(value)  # type: ignore[call-overload]
        if t.bits == 64:
            return f"INT64_C({v})" if t.signed else f"UINT64_C({v})"
        if t.signed:
            return f"(({t.c_type}){v})" if v >= 0 else f"(({t.c_type})({v + 1} - 1))"
        return f"(({t.c_type}){v}U)"
    return str(value)


def _cast(text: str, t: VType) -> str:
    return f"(({t.c_type})({text}))"


def _wrapped(op: str, left: str, right: str, t: VType) -> str:
    """An integer ``+ - * & | ^`` in type ``t``, computed in its unsigned twin (defined wrap-around)."""
    unsigned = f"uint{t.bits}_t"
    return f"(({t.c_type})(({unsigned})({left}) {op} ({unsigned})({right})))"


def render(e: ir.TExpr, access: Access) -> str:
    """``e`` as a C expression."""
    if isinstance(e, ir.Const):
        if e.type.kind == "bytes":
            raise ValueError("a constant bytes value has no C expression (payloads are copied by steps)")
        return literal(e.value, e.type)
    if isinstance(e, ir.Ref):
        return access(e.symbol, False)
    if isinstance(e, ir.Convert):
        return _convert(e, access)
    if isinstance(e, ir.Unary):
        inner = render(e.operand, access)
        if e.op == "not":
            return f"(!{inner})"
        if e.op == "~":
            return _cast(f"~(uint{e.type.bits}_t)({inner})", e.type)
        if e.type.kind == "float":
            return f"(-({inner}))"
        return _wrapped("-", "0", inner, e.type)
    if isinstance(e, ir.Binary):
        return _binary(e, access)
    if isinstance(e, ir.Call):
        function = FUNCTIONS[e.function]
        args = [access(a.symbol, True) if kind == "window" and isinstance(a, ir.Ref) else render(a, access)
                for kind, a in zip(function.args, e.args, strict=True)]  # fmt: skip
        t = e.args[0].type if function.args[0] in ("window",) else e.type
        return "(" + function.c.format(*args, t=suffix(t)) + ")"
    if isinstance(e, ir.Index):
        base = render(e.base, access)
        return f"rac_b_byte_at({base}, {base}_len, {e.base.type.size}U, {render(e.index, access)})"
    raise TypeError(f"cannot render {e!r}")


def _convert(e: ir.Convert, access: Access) -> str:
    source, t = e.operand.type, e.type
    inner = render(e.operand, access)
    if source.kind == "float" and t.kind == "int":
        inner = f"rac_b_f2{suffix(t)}({inner})"
        if t.bits < 32:
            inner = _cast(inner, t)
    elif t.kind != source.kind or t.bits != source.bits or t.signed != source.signed:
        inner = _cast(inner, t)
    if e.factor == 1:
        return inner
    if t.kind == "float":
        return f"(({inner}) * {float(e.factor)!r}f)"
    return _wrapped("*", inner, literal(e.factor, t), t)


_COMPARE = {"==", "!=", "<", "<=", ">", ">="}


def _binary(e: ir.Binary, access: Access) -> str:
    t = e.operands
    left, right = render(e.left, access), render(e.right, access)
    if e.op == "and":
        return f"({left} && {right})"
    if e.op == "or":
        return f"({left} || {right})"
    if e.op in _COMPARE:
        if t.kind == "bytes":
            same = f"rac_b_bytes_equal({left}, {left}_len, {right}, {right}_len)"
            return same if e.op == "==" else f"(!{same})"
        if t.kind == "int":  # exactly, in 64 bits, through a helper: a compiler warns on a comparison whose
            # operands' types decide it (u32 >= 0) or that compares a promoted '~' with a constant
            return f"(rac_b_i64({left}) {e.op} rac_b_i64({right}))"
        if t.kind == "float":
            left, right = _cast(left, t), _cast(right, t)
        return f"({left} {e.op} {right})"
    if t.kind == "float":
        return f"(({_cast(left, t)}) {e.op} ({_cast(right, t)}))"
    if e.op in ("/", "%"):
        name = "div" if e.op == "/" else "mod"
        return f"rac_b_{name}_{suffix(t)}({_cast(left, t)}, {_cast(right, t)})"
    if e.op in ("<<", ">>"):
        amount = f"((uint32_t)({right}) & {t.bits - 1}U)"
        if e.op == "<<":
            return _cast(f"(uint{t.bits}_t)({left}) << {amount}", t)
        return _cast(f"{_cast(left, t)} >> {amount}", t)
    return _wrapped(e.op, left, right, t)

