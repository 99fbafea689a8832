"""A variable's declaration checked and resolved: initial value, window, filter parameters, persistence.

Every field of a variable either changes what is generated or is refused here with evidence (a ``unit`` on
a bool, a ``size`` on an integer, a filter on bytes): nothing in a declaration is silently ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.expr import ExprError
from rac_fw.domains.firmware.plan.behaviour.model import (
    Calibrate,
    Delta,
    Exponential,
    Hysteresis,
    Median,
    MovingAverage,
    Throttle,
    Variable,
)
from rac_fw.domains.firmware.plan.behaviour.typecheck import compile_expr, convert
from rac_fw.domains.firmware.plan.behaviour.types import I32, VType
from rac_fw.domains.firmware.plan.evidence import Path, relax, remove, replace

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler


def _refuse(c: Compiler, path: Path, field: str, why: str, name: str) -> None:
    c.error("E_BEHAVIOUR_FIELD", f"variable {name}: {why}", [*path, field], [name],
            [relax(f"remove {field}", remove([*path, field]))])  # fmt: skip


def declare(c: Compiler, decl: Variable, var: ir.Variable, path: Path) -> None:
    """Resolve ``decl`` into ``var`` (init, window, filter), adding evidence for every misfit."""
    t = var.type
    if decl.unit is not None and not t.numeric:
        _refuse(c, path, "unit", f"a {t.kind} has no unit", decl.name)
    if decl.size is not None and t.kind != "bytes":
        _refuse(c, path, "size", f"size is the capacity of a bytes variable, not of a {t.name}", decl.name)
    if t.kind == "float" and c.target.core.fpu is None:
        c.error("E_BEHAVIOUR_TYPE", f"variable {decl.name}: {c.target.id} has no FPU for f32", [*path, "type"],
                [decl.name], [relax("use i32 (with a unit for the scale)", replace([*path, "type"], "i32"))])
    if decl.init is not None:
        var.init = _init(c, decl, t, [*path, "init"])
    if decl.window is not None:
        if not t.numeric:
            _refuse(c, path, "window", f"a window keeps numeric samples, not {t.name}", decl.name)
        elif decl.filter is not None:
            _refuse(c, path, "window", "a filter already decides what the variable keeps", decl.name)
        else:
            var.window = decl.window
    if decl.filter is not None:
        _filter(c, decl, var, [*path, "filter"])
    if decl.persist and (var.window or var.filter):
        _refuse(c, path, "persist", "a window or filter state is not persisted (persist its output instead)",
                decl.name)  # fmt: skip


def _init(c: Compiler, decl: Variable, t: VType, path: Path) -> Any:
    if t.kind == "bytes":
        if isinstance(decl.init, int | float | bool):
            c.error("E_BEHAVIOUR_TYPE", f"variable {decl.name} is bytes: initialise it with a payload "
                    "({hex: …}, {text: …}, {fill: …, size: …})", path, [decl.name])  # fmt: skip
            return None
        data, other = c.payload(decl.init, path)
        if other is not None:
            c.error("E_BEHAVIOUR_TYPE", f"variable {decl.name} cannot start as another variable", path, [decl.name])
            return None
        if data is not None and len(data) > t.size:
            shown = bytes(data[:16]).decode("utf-8", "replace") + ("…" if len(data) > 16 else "")
            c.error("E_BEHAVIOUR_SIZE", f"variable {decl.name} holds {t.size} bytes, its init ({shown!r}) has "
                    f"{len(data)}",
                    path, [decl.name], [relax(f"size it {len(data)}", replace(path[:-1] + ["size"], len(data)))])
            return None
        return data
    if not isinstance(decl.init, int | float | bool):
        c.error("E_BEHAVIOUR_TYPE", f"variable {decl.name} is {t.name}: a payload initialises only bytes", path,
                [decl.name])  # fmt: skip
        return None
    if isinstance(decl.init, bool) != (t.kind == "bool") or (isinstance(decl.init, float) and t.kind == "int"):
        c.error("E_BEHAVIOUR_TYPE", f"variable {decl.name} is {t.name}, its init {decl.init!r} is not", path,
                [decl.name])  # fmt: skip
        return None
    if t.kind == "int":
        from rac_fw.domains.firmware.plan.behaviour.types import int_range

        lo, hi = int_range(t)
        if not lo <= int(decl.init) <= hi:
            c.error("E_BEHAVIOUR_TYPE", f"variable {decl.name} is {t.name} ({lo}..{hi}): {decl.init} does not fit",
                    path, [decl.name])  # fmt: skip
            return None
        return int(decl.init)
    return float(decl.init) if t.kind == "float" else decl.init


def _const(c: Compiler, value: Any, path: Path) -> tuple[Any, VType] | None:
    """A constant's value and type (its unit included)."""
    try:
        typed = compile_expr(value, c.scope)
    except ExprError as exc:
        c.error("E_BEHAVIOUR_EXPR", f"{value!r}: {exc}", path, [str(value)])
        return None
    from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN, constant

    result = constant(typed)
    if result is UNKNOWN:
        c.error("E_BEHAVIOUR_EXPR", f"{value!r} must be a constant here", path, [str(value)])
        return None
    return result, typed.type


def _in(c: Compiler, value: Any, path: Path, want: VType) -> Any:
    try:
        typed = convert(compile_expr(value, c.scope), want)
    except ExprError as exc:
        c.error("E_BEHAVIOUR_UNIT", f"{value!r}: {exc}", path, [str(value)])
        return None
    return c.constant(value, path, want) if typed is not None else None


def _filter(c: Compiler, decl: Variable, var: ir.Variable, path: Path) -> None:
    f = decl.filter
    assert f is not None
    t = var.type
    numeric_only = not isinstance(f, Hysteresis)
    if numeric_only and not t.numeric:
        _refuse(c, path[:-1], "filter", f"a {f.kind} filter keeps numbers, not {t.name}", decl.name)
        return
    if isinstance(f, MovingAverage | Median):
        var.window = f.window
        var.filter = {"kind": f.kind, "input": t}
    elif isinstance(f, Exponential):
        var.filter = {"kind": "exponential", "input": t, "alpha_pct": f.alpha_pct}
    elif isinstance(f, Delta):
        var.filter = {"kind": "delta", "input": t, "min_change": _in(c, f.min_change, [*path, "min_change"], t)}
    elif isinstance(f, Throttle):
        var.filter = {"kind": "throttle", "input": t, "interval_ms": c.duration_ms(f.interval, [*path, "interval"])}
    elif isinstance(f, Hysteresis):
        if t.kind != "bool":
            c.error("E_BEHAVIOUR_TYPE", f"variable {decl.name}: a hysteresis filter gives a bool", [*path[:-1], "type"],
                    [decl.name], [relax("declare it bool", replace([*path[:-1], "type"], "bool"))])  # fmt: skip
            return
        low, high = _const(c, f.low, [*path, "low"]), _const(c, f.high, [*path, "high"])
        if low is None or high is None:
            return
        unit = high[1].unit or low[1].unit
        source = (I32 if low[1].kind == "int" and high[1].kind == "int" else low[1]).with_unit(unit)
        lo_v, hi_v = _in(c, f.low, [*path, "low"], source), _in(c, f.high, [*path, "high"], source)
        if lo_v is not None and hi_v is not None and lo_v >= hi_v:
            c.error("E_BEHAVIOUR_FIELD", f"variable {decl.name}: hysteresis low {f.low} must be below high {f.high}",
                    [*path, "low"], [decl.name])  # fmt: skip
        var.filter = {"kind": "hysteresis", "input": source, "low": lo_v, "high": hi_v}
    elif isinstance(f, Calibrate):
        raw = [_const(c, v, [*path, "raw", i]) for i, v in enumerate(f.raw)]
        if None in raw:
            return
        unit = raw[0][1].unit or raw[1][1].unit  # type: ignore[index]
        source = (I32 if t.kind == "int" else t).with_unit(unit)
        raw_v = [_in(c, v, [*path, "raw", i], source) for i, v in enumerate(f.raw)]
        to_v = [_in(c, v, [*path, "to", i], t) for i, v in enumerate(f.to)]
        if raw_v[0] is not None and raw_v[0] == raw_v[1]:
            c.error("E_BEHAVIOUR_FIELD", f"variable {decl.name}: the two raw points are equal", [*path, "raw"],
                    [decl.name])  # fmt: skip
        var.filter = {"kind": "calibrate", "input": source, "raw": raw_v, "to": to_v}
