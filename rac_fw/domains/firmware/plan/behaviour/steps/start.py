"""``start``: queue a script for the behaviour's thread, obeying its run mode (``start: alarm``)."""

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


class StartStep(_Closed):
    """Start a script in the background (single: ignored while pending; restart; queued)."""

    start: Name


def _compile(c: Compiler, name: str, path: list[str | int]) -> ir.Stmt:
    c.script(name, path)
    return ir.Stmt("start", format_path(path), data={"script": name})


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    m.start(stmt.data["script"])


STEP = StepSpec(StartStep, _compile, _predict)
