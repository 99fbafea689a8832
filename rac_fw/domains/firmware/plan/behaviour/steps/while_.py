"""``while``: repeat steps while a condition holds, at most ``max`` times (or ``forever``, said explicitly)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN
from rac_fw.domains.firmware.plan.behaviour.fields import Expr, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.evidence import relax, remove, replace
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.model import Steps
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


#: The most iterations a bounded ``while`` may allow.
MAX_ITERATIONS = 100_000


class WhileBody(_Closed):
    cond: Expr
    max: int | Literal["forever"] = Field(description="Most iterations (1 … 100000), or forever.")
    do: Steps
    on_limit: Steps = Field(default_factory=list, description="Run when max iterations ended the loop.")


class WhileStep(_Closed):
    """Repeat ``do`` while ``cond`` holds, at most ``max`` times; ``on_limit`` runs if the bound ended it."""

    while_: WhileBody = Field(alias="while")


def _compile(c: Compiler, body: WhileBody, path: list[str | int]) -> ir.Stmt:
    stmt = ir.Stmt("while", format_path(path), data={"max": body.max})
    if isinstance(body.max, int) and not 1 <= body.max <= MAX_ITERATIONS:
        bound = min(max(body.max, 1), MAX_ITERATIONS)
        c.error("E_BEHAVIOUR_UNBOUNDED", f"while max {body.max} is outside 1 … {MAX_ITERATIONS}", [*path, "max"],
                [str(body.max)], [relax(f"bound it at {bound}", replace([*path, "max"], bound))])  # fmt: skip
    cond = c.cond(body.cond, [*path, "cond"])
    if cond is not None:
        stmt.exprs["cond"] = cond
    stmt.blocks["do"] = c.body(body.do, [*path, "do"])
    stmt.blocks["on_limit"] = c.body(body.on_limit, [*path, "on_limit"])
    if body.max == "forever" and body.on_limit:
        c.error("E_BEHAVIOUR_FIELD", "on_limit never runs in a loop without a bound", [*path, "on_limit"], [],
                [relax("remove on_limit", remove([*path, "on_limit"]))])  # fmt: skip
    return stmt


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    bound = stmt.data["max"]
    limit = m.loop_cap if bound == "forever" else bound
    for count in range(limit):
        truth = m.truth(stmt.exprs["cond"])
        if truth is UNKNOWN:
            m.loop_unknown(stmt.blocks["do"], 0, limit - count, None, stmt.exprs["cond"])
            return
        if not truth:
            return
        m.run(stmt.blocks["do"])
    if bound == "forever":
        m.open(f"{stmt.path} loops beyond {m.loop_cap} iterations")
        return
    if m.truth(stmt.exprs["cond"]) is not False:
        m.run(stmt.blocks["on_limit"])


STEP = StepSpec(WhileStep, _compile, _predict)
