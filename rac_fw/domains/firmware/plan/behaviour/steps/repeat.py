"""``repeat``: run steps a bounded number of times, with an optional index (``as: i`` counts 0, 1, …)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN, constant, upper_bound
from rac_fw.domains.firmware.plan.behaviour.fields import Expr, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.behaviour.types import U32
from rac_fw.domains.firmware.plan.evidence import relax, replace
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.model import Steps
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine

#: The most iterations a repeat may run (a plan states bounded work).
MAX_TIMES = 100_000


class RepeatBody(_Closed):
    times: Expr = Field(description="How many times (≤ 100000): a number, or an expression bounded by its type "
                       "(≤ 16 bits) or by min(…, N).")
    as_: Name | None = Field(default=None, alias="as", description="The index name: 0 … times-1.")
    do: Steps


class RepeatStep(_Closed):
    """Run ``do`` ``times`` times (``as`` names the index, counting from 0)."""

    repeat: RepeatBody


def _compile(c: Compiler, body: RepeatBody, path: list[str | int]) -> ir.Stmt:
    stmt = ir.Stmt("repeat", format_path(path), data={"index": None})
    times = c.expr(body.times, [*path, "times"])
    if times is not None:
        if times.type.kind != "int":
            c.error("E_BEHAVIOUR_TYPE", f"times {body.times!r} is a {times.type.described()}, not an integer",
                    [*path, "times"], [str(body.times)])  # fmt: skip
        else:
            fixed = constant(times)
            bound = upper_bound(times) or 0
            if bound > MAX_TIMES:
                clamp = f"min({body.times}, 1000)" if fixed is UNKNOWN else MAX_TIMES
                c.error("E_BEHAVIOUR_UNBOUNDED", f"repeat {body.times!r} may run up to {bound} times (at most "
                        f"{MAX_TIMES}: bound a run-time count, e.g. with min)", [*path, "times"],
                        [str(body.times)], [relax(f"bound it: {clamp}", replace([*path, "times"], clamp))])
            stmt.exprs["times"] = times  # fmt: skip
            stmt.data["bound"] = bound
    symbols = []
    if body.as_ is not None:
        index = ir.Symbol("loop", body.as_, f"rac_i{len(path)}_{body.as_}", U32)
        stmt.data["index"] = index
        symbols.append(index)
    with c.scoped(symbols):
        stmt.blocks["do"] = c.body(body.do, [*path, "do"])
    return stmt


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    times = m.value(stmt.exprs["times"])
    index = stmt.data["index"]
    if times is UNKNOWN:
        m.loop_unknown(stmt.blocks["do"], 0, stmt.data["bound"], index)
        return
    for i in range(max(0, times)):
        with m.binding(index, i):
            m.run(stmt.blocks["do"])


STEP = StepSpec(RepeatStep, _compile, _predict)
