"""``wait_until``: wait for a condition, at most ``timeout`` (``on_timeout`` steps run if it passes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.fields import Duration, Expr, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.evidence import relax, remove
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.model import Steps
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine

#: How often a waiting thread re-checks the condition.
POLL_MS = 1


class WaitUntilBody(_Closed):
    cond: Expr
    timeout: Duration | Literal["forever"]
    on_timeout: Steps = Field(default_factory=list)


class WaitUntilStep(_Closed):
    """Wait until ``cond`` holds or ``timeout`` passes (then ``on_timeout`` runs); forever must be said."""

    wait_until: WaitUntilBody


def _compile(c: Compiler, body: WaitUntilBody, path: list[str | int]) -> ir.Stmt:
    ms = None if body.timeout == "forever" else c.duration_ms(body.timeout, [*path, "timeout"])
    stmt = ir.Stmt("wait_until", format_path(path), data={"timeout_ms": ms, "poll_ms": POLL_MS})
    cond = c.cond(body.cond, [*path, "cond"])
    if cond is not None:
        stmt.exprs["cond"] = cond
    stmt.blocks["on_timeout"] = c.body(body.on_timeout, [*path, "on_timeout"])
    if ms is None and body.on_timeout:
        c.error("E_BEHAVIOUR_FIELD", "on_timeout never runs without a timeout", [*path, "on_timeout"], [],
                [relax("remove on_timeout", remove([*path, "on_timeout"]))])  # fmt: skip
    return stmt


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    if not m.wait_for(stmt.exprs["cond"], stmt.data["timeout_ms"], stmt.path):
        m.run(stmt.blocks["on_timeout"])


def _cost(stmt: ir.Stmt, costs: Any) -> float:
    return float(stmt.data["timeout_ms"] or 0)


STEP = StepSpec(WaitUntilStep, _compile, _predict, blocking=True, cost_ms=_cost)
