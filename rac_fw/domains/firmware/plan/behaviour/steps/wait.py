"""``wait``: pause the behaviour's thread (``wait: 250ms``); interrupt-context triggers still run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.fields import Duration, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


class WaitStep(_Closed):
    """Pause for a duration (250ms, 2s)."""

    wait: Duration


def _compile(c: Compiler, duration: str, path: list[str | int]) -> ir.Stmt:
    return ir.Stmt("wait", format_path(path), data={"ms": c.duration_ms(duration, path) or 0})


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    m.sleep(stmt.data["ms"])


def _cost(stmt: ir.Stmt, costs: Any) -> float:
    return float(stmt.data["ms"])


STEP = StepSpec(WaitStep, _compile, _predict, blocking=True, cost_ms=_cost)
