"""``stop``: end a trigger for good (``stop: self``, or ``stop: blink`` by its name)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.fields import _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import StepSpec
from rac_fw.domains.firmware.plan.evidence import relax, replace
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.paths import format_path

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.predict import Machine


class StopStep(_Closed):
    """End a trigger: ``self`` (the one running) or a named trigger; it never runs again."""

    stop: Name


def _compile(c: Compiler, name: str, path: list[str | int]) -> ir.Stmt:
    names = [t.name for t in c.behaviour.triggers if t.name]
    if name != "self" and name not in names:
        c.error("E_BEHAVIOUR_NAME", f"no trigger is named {name!r} (named triggers: {', '.join(names) or 'none'})",
                path, [name], [relax("stop the running trigger (self)", replace(path, "self"))])  # fmt: skip
    return ir.Stmt("stop", format_path(path), data={"trigger": name})


def _predict(m: Machine, stmt: ir.Stmt) -> None:
    m.stop(stmt.data["trigger"])


STEP = StepSpec(StopStep, _compile, _predict)
