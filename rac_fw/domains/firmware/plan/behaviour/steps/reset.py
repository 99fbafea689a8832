"""``reset``: restart the chip now (``reset: chip``); persisted variables keep their values, the rest start over."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.fields import _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


class ResetStep(_Closed):
    """Reset the chip (a software reset): it boots again; persisted variables keep their values."""

    reset: Literal["chip"]


def _compile(c: Compiler, value: str, path: list[str | int]) -> ir.Stmt:
    return ir.Stmt("reset", format_path(path))


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    m.reset()


STEP = StepSpec(ResetStep, _compile, _predict, blocking=True)
