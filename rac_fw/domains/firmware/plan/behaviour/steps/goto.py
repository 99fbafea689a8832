"""``goto``: change the machine's state: the current state's exit steps, then the new one's entry steps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.fields import _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


class GotoStep(_Closed):
    """Enter another state of the machine (exit steps of the old, entry steps of the new)."""

    goto: Name


def _compile(c: Compiler, name: str, path: list[str | int]) -> ir.Stmt:
    state = c.state(name, path)
    return ir.Stmt("goto", format_path(path), data={"state": name, "c": state.c if state else ""})


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    m.goto(stmt.data["state"])


STEP = StepSpec(GotoStep, _compile, _predict)
