"""``set``: write variables (``set: {count: "count + 1", buf: {hex: "9f 00"}}``), in order.

A variable with a filter takes the value as a sample (the filter decides what it then holds); one with a
window appends it; a bytes variable takes a payload or another bytes value; a persisted one is saved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.contexts import _path
from rac_fw.domains.firmware.plan.behaviour.fields import Expr, Payload, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


class SetStep(_Closed):
    """Write variables, in order: ``{name: expression}`` (a payload for a bytes variable)."""

    set: dict[Name, Expr | Payload] = Field(min_length=1, max_length=16)


def _compile(c: Compiler, values: dict[str, Any], path: list[str | int]) -> ir.Stmt:
    stmt = ir.Stmt("set", format_path(path), data={"assign": [], "writes": []})
    for name, value in values.items():
        where = [*path, name]
        var = c.variable(name, where, values)
        if var is None:
            continue
        stmt.data["writes"].append(name)
        if var.type.kind == "bytes":
            if isinstance(value, str | int | float | bool):
                typed = c.expr(value, where)
                if typed is not None and typed.type.kind != "bytes":
                    c.error("E_BEHAVIOUR_TYPE", f"{name} is bytes; {value!r} is a {typed.type.described()}", where,
                            [name])  # fmt: skip
                    continue
                if typed is not None:
                    key = f"v{len(stmt.exprs)}"
                    stmt.exprs[key] = typed
                    stmt.data["assign"].append((name, "expr", key))
                continue
            data, other = c.payload(value, where)
            if data is not None and len(data) > var.type.size:
                c.error("E_BEHAVIOUR_SIZE", f"{name} holds {var.type.size} bytes; the payload has {len(data)}",
                        where, [name])  # fmt: skip
                continue
            if other is not None:
                stmt.data["assign"].append((name, "var", other.name))
                stmt.data.setdefault("reads", []).append(other.name)
            elif data is not None:
                stmt.data["assign"].append((name, "bytes", data))
            continue
        if not isinstance(value, str | int | float | bool):
            c.error("E_BEHAVIOUR_TYPE", f"{name} is {var.type.described()}: a payload sets only bytes", where, [name])
            continue
        want = var.filter["input"] if var.filter else var.type
        typed = c.expr(value, where, want, unit_field=[*_path(var.path), "unit"] if not var.filter else None)
        if typed is not None:
            key = f"v{len(stmt.exprs)}"
            stmt.exprs[key] = typed
            stmt.data["assign"].append((name, "expr", key))
    return stmt


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    for name, kind, what in stmt.data["assign"]:
        if kind == "expr":
            m.assign(name, m.value(stmt.exprs[what]))
        elif kind == "bytes":
            m.assign(name, list(what))
        else:
            m.assign(name, m.var_value(what))


STEP = StepSpec(SetStep, _compile, _predict)
