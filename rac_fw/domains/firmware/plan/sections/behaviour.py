"""The plan-level ``behaviour:`` block: what the application does (``rac_fw/domains/firmware/plan/behaviour/``).

The block's model, compiler, obligations, trace predictor and C renderer live in the behaviour package;
this spec registers the block like every plan-level block: its checks (the compiler's evidence, then the
obligations of ``behaviour.checks``) and one realization per framework, which renders the behaviour's C
into the builder's main file through ``behaviour.lowering``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.plan.behaviour.checks import CODES, check, ram_bytes
from rac_fw.domains.firmware.plan.behaviour.lowering import compiled, render, used_ops
from rac_fw.domains.firmware.plan.behaviour.lowering import program as compiled_program
from rac_fw.domains.firmware.plan.behaviour.model import Behaviour
from rac_fw.domains.firmware.plan.behaviour.render import OpRef
from rac_fw.domains.firmware.plan.spec import SectionSpec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild


def _baremetal(b: BaremetalBuild, value: Behaviour) -> None:
    found = compiled_program(b.plan, b.target, "baremetal")
    assert found is not None
    refs = {i: OpRef(b.views.get(i, {"outputs": {}}), b.op_module(i)) for i in used_ops(found)}
    b.behaviour = render(b.plan, b.target, "baremetal", refs)
    b.noinit = any(v.persist for v in found.variables)


def _check(plan: Any, target: Any, framework: str, value: Behaviour) -> list[Any]:
    return check(plan, target, framework)


def _ram(plan: Any, target: Any, framework: str, value: Behaviour) -> int:
    found, _ = compiled(plan, target, framework)
    return ram_bytes(found) if found is not None else 0


SECTION = SectionSpec(
    name="behaviour",
    model=Behaviour,
    family="behaviour",
    realizations={"baremetal": _baremetal},
    checks=(_check,),
    codes=CODES,
    ram=_ram,
)
