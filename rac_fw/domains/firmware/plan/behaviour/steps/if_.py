"""``if``: run ``then`` when the condition holds, else ``else`` (``if: {cond: "x > 3", then: […]}``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN
from rac_fw.domains.firmware.plan.behaviour.fields import Expr, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.model import Steps
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


class IfBody(_Closed):
    cond: Expr
    then: Steps
    else_: Steps = Field(default_factory=list, alias="else")


class IfStep(_Closed):
    """Branch: ``then`` steps when ``cond`` holds, else the ``else`` steps."""

    if_: IfBody = Field(alias="if")


def _compile(c: Compiler, body: IfBody, path: list[str | int]) -> ir.Stmt:
    stmt = ir.Stmt("if", format_path(path))
    cond = c.cond(body.cond, [*path, "cond"])
    if cond is not None:
        stmt.exprs["cond"] = cond
    stmt.blocks["then"] = c.body(body.then, [*path, "then"])
    stmt.blocks["else"] = c.body(body.else_, [*path, "else"])
    return stmt


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    truth = m.truth(stmt.exprs["cond"])
    if truth is UNKNOWN:
        m.branch([stmt.blocks["then"], stmt.blocks["else"]])
    else:
        m.run(stmt.blocks["then"] if truth else stmt.blocks["else"])


STEP = StepSpec(IfStep, _compile, _predict)
