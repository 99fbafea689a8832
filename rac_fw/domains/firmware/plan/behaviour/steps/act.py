"""``act``: ask an operation to do something (``act: led.toggle``, or ``act: {op: spi, action: transfer, …}``).

What an operation can do is declared on its spec (``OpSpec.actions``: parameters, the outputs it refreshes,
whether it may block or fail, what it prints); each framework renders the op template's ``act_<action>``
macro. ``into`` copies the refreshed output into a variable; ``ok`` receives whether the action succeeded.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.contexts import supports
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN
from rac_fw.domains.firmware.plan.behaviour.fields import Expr, Payload, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.behaviour.types import BOOL, parse_type
from rac_fw.domains.firmware.plan.behaviour.units import unit
from rac_fw.domains.firmware.plan.evidence import relax, remove, replace
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.paths import format_path
from rac_fw.domains.firmware.plan.registry import spec as op_spec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine

#: ``op.action`` (the shorthand for an action without arguments).
ActionRef = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}\.[a-z][a-z0-9_]{0,31}$")]


class ActBody(_Closed):
    op: Name = Field(description="The operation's name.")
    action: Name = Field(description="One of its actions (rac-fw schema firmware --op KIND lists them).")
    args: dict[Name, Expr | Payload] = Field(default_factory=dict, description="The action's parameters.")
    into: Name | None = Field(default=None, description="A variable that receives the output the action refreshes.")
    ok: Name | None = Field(default=None, description="A bool variable that receives whether the action succeeded.")


class ActStep(_Closed):
    """Ask an operation to act: ``op.action``, or an object with ``args``, ``into`` and ``ok``."""

    act: ActionRef | ActBody


def _compile(c: Compiler, value: str | ActBody, path: list[str | int]) -> ir.Stmt:
    body = ActBody(op=value.split(".")[0], action=value.split(".")[1]) if isinstance(value, str) else value
    where = path if isinstance(value, str) else [*path, "action"]
    stmt = ir.Stmt("act", format_path(path), data={"op": None, "action": body.action, "args": [], "writes": []})
    found = c.op_named(body.op, path if isinstance(value, str) else [*path, "op"])
    if found is None:
        return stmt
    index, op = found
    actions = op_spec(op.op).actions
    action = actions.get(body.action)
    if action is None:
        near = difflib.get_close_matches(body.action, list(actions), n=3, cutoff=0.4) or list(actions)[:3]
        fix = (lambda a: replace(path, f"{body.op}.{a}")) if isinstance(value, str) else (
            lambda a: replace([*path, "action"], a))  # fmt: skip
        c.error("E_BEHAVIOUR_ACTION", f"{body.op} ({op.op}) has no action {body.action!r}; its actions: "
                f"{', '.join(actions) or 'none'}", where, [body.op, body.action],
                [relax(f"use {a}", fix(a)) for a in near])  # fmt: skip
        return stmt
    if not supports(c, index, f"action:{body.action}", where):
        return stmt
    stmt.data.update(op=index, blocking=action.blocking)
    c.actions.append((index, body.action))
    base = [*path, "args"]
    for name in body.args:
        if name not in action.params:
            c.error("E_BEHAVIOUR_ACTION", f"{op.op}.{body.action} takes no {name!r} (it takes "
                    f"{', '.join(action.params) or 'nothing'})", [*base, name], [name],
                    [relax(f"remove {name}", remove([*base, name]))])  # fmt: skip
    for name, param in action.params.items():
        given = body.args.get(name)
        if given is None:
            if param.required:
                c.error("E_BEHAVIOUR_ACTION", f"{op.op}.{body.action} needs {name} ({param.doc})", base, [name])
            continue
        if param.kind == "payload":
            data, var = c.payload(given, [*base, name]) if not isinstance(given, str | int | float | bool) else (
                None, c.variable(str(given), [*base, name]))  # fmt: skip
            if var is not None:
                stmt.data["args"].append((name, "var", var.name))
                stmt.data.setdefault("reads", []).append(var.name)
            elif data is not None:
                stmt.data["args"].append((name, "bytes", data))
            continue
        want = parse_type(param.type or "i32").with_unit(unit(param.unit))
        typed = c.expr(given, [*base, name], want) if isinstance(given, str | int | float | bool) else None
        if typed is not None:
            stmt.exprs[name] = typed
            stmt.data["args"].append((name, "expr", name))
    _results(c, stmt, body, action, op, path)
    return stmt


def _results(c: Compiler, stmt: ir.Stmt, body: ActBody, action: Any, op: Any, path: list[str | int]) -> None:
    spec = op_spec(op.op)
    if body.into is not None:
        var = c.variable(body.into, [*path, "into"])
        if not action.updates:
            c.error("E_BEHAVIOUR_ACTION", f"{op.op}.{body.action} refreshes no output to copy into {body.into}",
                    [*path, "into"], [body.into], [relax("remove into", remove([*path, "into"]))])  # fmt: skip
        elif var is not None:
            out = spec.outputs[action.updates[0]]
            got = parse_type(out.type, out.size(op) if out.size else None).with_unit(unit(out.unit))
            want = var.filter["input"] if var.filter else var.type
            if got.kind != want.kind and not (got.numeric and want.numeric):
                c.error("E_BEHAVIOUR_TYPE", f"{body.into} is {var.type.described()}, {op.op}.{action.updates[0]} "
                        f"is {got.described()}", [*path, "into"], [body.into])  # fmt: skip
            else:
                stmt.data["into"] = (body.into, action.updates[0], got)
                stmt.data["writes"].append(body.into)
    if body.ok is not None:
        var = c.variable(body.ok, [*path, "ok"])
        if not action.fails:
            c.error("E_BEHAVIOUR_ACTION", f"{op.op}.{body.action} cannot fail: ok would always be true",
                    [*path, "ok"], [body.ok], [relax("remove ok", remove([*path, "ok"]))])  # fmt: skip
        elif var is not None and var.type != BOOL:
            c.error("E_BEHAVIOUR_TYPE", f"ok receives a bool; {body.ok} is {var.type.described()}", [*path, "ok"],
                    [body.ok])  # fmt: skip
        elif var is not None:
            stmt.data["ok"] = body.ok
            stmt.data["writes"].append(body.ok)


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    index = stmt.data["op"]
    if index is None:
        return
    m.act(index, stmt)
    into = stmt.data.get("into")
    if into is not None:
        m.assign(into[0], m.output(index, into[1]))
    if stmt.data.get("ok"):
        m.assign(stmt.data["ok"], UNKNOWN if m.action_fails(index, stmt.data["action"]) else True)


def _cost(stmt: ir.Stmt, costs: Any) -> float:
    index = stmt.data.get("op")
    return 0.0 if index is None else costs.action_ms(index, stmt)


STEP = StepSpec(ActStep, _compile, _predict, cost_ms=_cost)
