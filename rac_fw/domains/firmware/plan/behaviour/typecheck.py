"""Typing and unit-checking expressions: syntax tree + the names in scope → a typed IR expression.

Names resolve in a :class:`Scope` (variables, loop indices, operations' outputs, states). Arithmetic
combines units of one dimension by scaling the coarser side (exactly, for integers); a sum of volts and
milliseconds, an ``and`` of numbers or a shift of a float is an :class:`ExprError` at the operator's
column. Literals take the type of what they meet (``count + 1`` stays ``u32``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from rac_fw.domains.firmware.plan.behaviour import expr as ast
from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.evaluate import to_type
from rac_fw.domains.firmware.plan.behaviour.functions import FUNCTIONS, FunctionError, result_type
from rac_fw.domains.firmware.plan.behaviour.types import BOOL, F32, I32, I64, U32, VType, int_range, joined
from rac_fw.domains.firmware.plan.behaviour.units import UNITS, UnitError, common, factor, unit

_TYPE, _UNIT = "E_BEHAVIOUR_TYPE", "E_BEHAVIOUR_UNIT"
_ARITH = {"+", "-", "*", "/", "%"}
_BITS = {"&", "|", "^", "<<", ">>"}
_COMPARE = {"==", "!=", "<", "<=", ">", ">="}


@dataclass
class Scope:
    """The names an expression may use, innermost (loop indices) last."""

    symbols: dict[str, ir.Symbol] = field(default_factory=dict)
    windows: set[str] = field(default_factory=set)
    """Variables that keep a window of samples (the reductions take them)."""

    def child(self, extra: Iterable[ir.Symbol]) -> Scope:
        return Scope({**self.symbols, **{s.name: s for s in extra}}, self.windows)

    def lookup(self, name: ast.Name) -> ir.Symbol:
        found = self.symbols.get(name.text)
        if found is not None:
            return found
        near = tuple(difflib.get_close_matches(name.text, list(self.symbols), n=3, cutoff=0.6))
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        known = ", ".join(sorted(self.symbols)) or "none"
        raise ast.ExprError(f"unknown name {name.text!r}{hint} (names here: {known})", name.column, near)


def _literal(node: ast.Num) -> ir.Const:
    u = unit(node.unit)
    if isinstance(node.value, float):
        return ir.Const(F32.with_unit(u), node.value)
    lo, hi = int_range(I32)
    if lo <= node.value <= hi:
        return ir.Const(I32.with_unit(u), node.value)
    if 0 <= node.value <= int_range(U32)[1]:
        return ir.Const(U32.with_unit(u), node.value)
    raise ast.ExprError(f"{node.value} does not fit 32 bits", node.column)


def convert(e: ir.TExpr, into: VType, column: int = 0) -> ir.TExpr:
    """``e`` as a value of ``into`` (numeric conversion and exact unit scaling); ExprError if impossible."""
    t = e.type
    if t == into:
        return e
    if t.kind != into.kind and not (t.numeric and into.numeric):
        raise ast.ExprError(f"a {t.described()} value cannot be used as {into.described()}", column, code=_TYPE)
    if t.kind == "bytes":
        if into.kind == "bytes":
            return e
        raise ast.ExprError(f"a {t.described()} value cannot be used as {into.described()}", column, code=_TYPE)
    try:
        scale = factor(t.unit, into.unit)
    except UnitError as exc:
        raise ast.ExprError(str(exc), column, code=_UNIT) from None
    if isinstance(e, ir.Const) and t.numeric:  # folded as the C converts: wrapped (or saturated) to ``into``
        return ir.Const(into, to_type(to_type(e.value, into) * scale, into))
    return ir.Convert(into, e, scale)


def _fits(literal: ir.Const, other: VType) -> bool:
    if literal.type.kind != "int" or other.kind != "int" or isinstance(literal.value, bool):
        return False
    lo, hi = int_range(joined(other, other))
    return lo <= literal.value <= hi


def _operands(left: ir.TExpr, right: ir.TExpr, column: int, *, with_units: bool) -> VType:
    lt, rt = left.type, right.type
    if not (lt.numeric and rt.numeric):
        raise ast.ExprError(f"expects numbers, got {lt.described()} and {rt.described()}", column, code=_TYPE)
    # An integer literal meets a typed value in that value's signedness (count + 1 on a u32 stays u32).
    if isinstance(left, ir.Const) and _fits(left, rt):
        lt = rt.with_unit(lt.unit)
    elif isinstance(right, ir.Const) and _fits(right, lt):
        rt = lt.with_unit(rt.unit)
    base = joined(lt, rt)
    # A literal meeting a narrower typed value keeps that value's type (count + 1 on a u8 stays u8 arithmetic
    # in 32 bits, assigned back exactly); units: the finer of the two.
    if not with_units:
        return base
    try:
        return base.with_unit(common(lt.unit, rt.unit))
    except UnitError as exc:
        raise ast.ExprError(str(exc), column, code=_UNIT) from None


def check(node: ast.Node, scope: Scope) -> ir.TExpr:
    """The typed expression for ``node`` (ExprError, located, when it does not type)."""
    if isinstance(node, ast.Num):
        return _literal(node)
    if isinstance(node, ast.Bool):
        return ir.Const(BOOL, node.value)
    if isinstance(node, ast.Name):
        symbol = scope.lookup(node)
        return ir.Ref(symbol.type, symbol)
    if isinstance(node, ast.Unary):
        return _unary(node, check(node.operand, scope))
    if isinstance(node, ast.Binary):
        return _binary(node, check(node.left, scope), check(node.right, scope))
    if isinstance(node, ast.Call):
        return _call(node, scope)
    if isinstance(node, ast.Index):
        base = check(node.base, scope)
        if base.type.kind != "bytes":
            raise ast.ExprError(f"only bytes values are indexed, not {base.type.described()}", node.column, code=_TYPE)
        index = check(node.index, scope)
        if index.type.kind != "int":
            raise ast.ExprError("an index is an integer", node.column, code=_TYPE)
        return ir.Index(VType("int", 8, False), base, index)
    raise ast.ExprError("unsupported expression", node.column)


def _unary(node: ast.Unary, operand: ir.TExpr) -> ir.TExpr:
    t = operand.type
    if node.op == "not":
        if t.kind != "bool":
            raise ast.ExprError(f"'not' needs a bool, got {t.described()}", node.column, code=_TYPE)
        return ir.Unary(BOOL, "not", operand)
    if node.op == "~":
        if t.kind != "int":
            raise ast.ExprError(f"'~' needs an integer, got {t.described()}", node.column, code=_TYPE)
        return ir.Unary(joined(t, t).with_unit(None), "~", operand)
    if not t.numeric:
        raise ast.ExprError(f"'-' needs a number, got {t.described()}", node.column, code=_TYPE)
    result = t if t.kind == "float" else joined(t, I32).with_unit(t.unit)
    return ir.Unary(result, "-", operand)


def _binary(node: ast.Binary, left: ir.TExpr, right: ir.TExpr) -> ir.TExpr:
    op, column = node.op, node.column
    lt, rt = left.type, right.type
    if op in ("and", "or"):
        if lt.kind != "bool" or rt.kind != "bool":
            raise ast.ExprError(f"'{op}' needs two bools, got {lt.described()} and {rt.described()}",
                                column, code=_TYPE)
        return ir.Binary(BOOL, op, left, right, BOOL)
    if op in _COMPARE:
        return _compare(node, left, right)
    if op in _BITS:
        if lt.kind != "int" or rt.kind != "int":
            raise ast.ExprError(f"'{op}' needs integers, got {lt.described()} and {rt.described()}", column, code=_TYPE)
        if lt.unit or rt.unit:
            raise ast.ExprError(f"'{op}' works on raw bits: its operands carry no unit", column, code=_UNIT)
        t = _operands(left, right, column, with_units=False)
        if op in ("<<", ">>"):
            t = joined(lt, lt)
        return ir.Binary(t, op, left, right, t)
    if op == "%" and (lt.kind == "float" or rt.kind == "float"):
        raise ast.ExprError("'%' needs integers (a float remainder is not defined here)", column, code=_TYPE)
    if op in ("+", "-", "%"):
        t = _operands(left, right, column, with_units=True)
        return ir.Binary(t, op, convert(left, t, column), convert(right, t, column), t)
    # * and /: a unit on at most one side, or the same dimension divided (a ratio without unit)
    t = _operands(left, right, column, with_units=False)
    if lt.unit and rt.unit:
        if op == "*":
            raise ast.ExprError(f"a product of {lt.unit.symbol} and {rt.unit.symbol} has no unit here",
                                column, code=_UNIT)
        try:
            both = t.with_unit(common(lt.unit, rt.unit))
        except UnitError as exc:
            raise ast.ExprError(str(exc), column, code=_UNIT) from None
        return ir.Binary(t.with_unit(None), op, convert(left, both, column), convert(right, both, column), both)
    if rt.unit and op == "/":
        raise ast.ExprError(f"dividing by {rt.unit.symbol} gives a unit this language does not have",
                            column, code=_UNIT)
    return ir.Binary(t.with_unit(lt.unit or rt.unit), op, left, right, t.with_unit(None))


def _compare(node: ast.Binary, left: ir.TExpr, right: ir.TExpr) -> ir.TExpr:
    lt, rt = left.type, right.type
    op, column = node.op, node.column
    if lt.kind in ("bool", "state", "bytes") or rt.kind in ("bool", "state", "bytes"):
        if lt.kind != rt.kind:
            raise ast.ExprError(f"cannot compare {lt.described()} with {rt.described()}", column, code=_TYPE)
        if op not in ("==", "!="):
            raise ast.ExprError(f"{lt.kind} values compare only with == and !=", column, code=_TYPE)
        return ir.Binary(BOOL, op, left, right, lt)
    t = _operands(left, right, column, with_units=True)
    if t.kind == "int":  # compared exactly: both sides widened to 64 bits (u32 against i32 included)
        t = I64.with_unit(t.unit)
    return ir.Binary(BOOL, op, convert(left, t, column), convert(right, t, column), t)


def _call(node: ast.Call, scope: Scope) -> ir.TExpr:
    function = FUNCTIONS.get(node.name)
    if function is None:
        near = tuple(difflib.get_close_matches(node.name, list(FUNCTIONS), n=3, cutoff=0.5))
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise ast.ExprError(f"unknown function {node.name!r}{hint} (functions: {', '.join(FUNCTIONS)})",
                            node.column, near)  # fmt: skip
    if len(node.args) != len(function.args):
        raise ast.ExprError(f"{node.name} takes {len(function.args)} argument(s), got {len(node.args)}", node.column)
    args = []
    for kind, arg in zip(function.args, node.args, strict=True):
        typed = check(arg, scope)
        if kind == "window" and not (
            isinstance(typed, ir.Ref) and typed.symbol.kind == "var" and typed.symbol.name in scope.windows
        ):
            windows = ", ".join(sorted(scope.windows)) or "none (declare one with `window: N`)"
            raise ast.ExprError(f"{node.name} takes a variable with a window; windows: {windows}",
                                node.column, code=_TYPE)
        if kind == "bytes" and typed.type.kind != "bytes":
            raise ast.ExprError(f"{node.name} takes a bytes value, not {typed.type.described()}",
                                node.column, code=_TYPE)
        args.append(typed)
    try:
        result = result_type(node.name, [a.type for a in args])
    except (FunctionError, UnitError) as exc:
        raise ast.ExprError(str(exc), node.column, code=_UNIT if isinstance(exc, UnitError) else _TYPE) from None
    if node.name == "scale":
        source = result.with_unit(common(common(args[0].type.unit, args[1].type.unit), args[2].type.unit))
        args = [convert(a, joined(a.type, source).with_unit(source.unit), node.column) for a in args[:3]] + [
            convert(a, result, node.column) for a in args[3:]
        ]
    elif function.args[0] == "value":
        args = [convert(a, result, node.column) for a in args]
    return ir.Call(result, node.name, tuple(args))


def compile_expr(text: str | int | float | bool, scope: Scope) -> ir.TExpr:
    """Parse and type ``text`` (a YAML number or bool is taken as its literal)."""
    if isinstance(text, bool):
        return ir.Const(BOOL, text)
    if isinstance(text, int | float):
        return _literal(ast.Num(1, text))
    return check(ast.parse(text), scope)


def unit_fixes(text: str, scope: Scope, want: VType | None = None, most: int = 3) -> list[str]:
    """Rewrites of ``text`` whose only change is one literal's unit (``5ms`` → ``5mV``, or no unit) that type
    in ``scope`` (and convert to ``want``): the relaxations of a unit mismatch, each checked before it is offered."""
    try:
        tokens = [t for t in ast.tokenize(text) if t.kind == "num" and t.unit is not None]
        named = [s.type.unit for n in ast.names(ast.parse(text)) if (s := scope.symbols.get(n.text)) is not None]
    except ast.ExprError:
        return []
    units = {u.symbol: u for u in [*named, want.unit if want else None] if u is not None}
    found: list[str] = []
    for token in tokens:
        start = token.column - 1 + len(token.text)
        dimension = UNITS[token.unit].dimension if token.unit in UNITS else None
        if any(u.dimension == dimension for u in units.values()):
            continue  # a literal of a dimension the expression expects is not the culprit
        for symbol in [*sorted(units), ""]:
            candidate = text[:start] + symbol + text[start + len(token.unit or ""):]
            try:
                typed = compile_expr(candidate, scope)
                if want is not None:
                    convert(typed, want)
            except ast.ExprError:
                continue
            if candidate not in found:
                found.append(candidate)
            if len(found) >= most:
                return found
    return found
