"""``call``: run a script's steps now, in the caller (``call: blink_three``)."""

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


class CallStep(_Closed):
    """Run a script now and continue when it has finished."""

    call: Name


def _compile(c: Compiler, name: str, path: list[str | int]) -> ir.Stmt:
    c.script(name, path)
    return ir.Stmt("call", format_path(path), data={"script": name})


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    m.call(stmt.data["script"])


STEP = StepSpec(CallStep, _compile, _predict)
