"""``exit``: end the behaviour now with a code (``exit: 0`` success; ``rac: done exit=N`` otherwise)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.fields import _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


class ExitStep(_Closed):
    """End the behaviour with a code: 0 prints ``rac: done``, N prints ``rac: done exit=N``."""

    exit: Annotated[int, Field(ge=0, le=255)]


def _compile(c: Compiler, code: int, path: list[str | int]) -> ir.Stmt:
    return ir.Stmt("exit", format_path(path), data={"code": code})


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    m.exit(stmt.data["code"])


STEP = StepSpec(ExitStep, _compile, _predict, blocking=True)
