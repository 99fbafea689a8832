"""Zephyr lowering: a validated plan plus target facts → a complete Zephyr application directory.

The output is ``zephyr_app/``'s CMakeLists.txt plus a ``prj.conf`` holding exactly the Kconfig symbols
the operations need, a ``boards/<board>.overlay`` with the devicetree nodes the C relies on
(``zephyr,user`` io-channels and ADC channel nodes, a UART's ``dmas`` route, controller ``status``),
and ``src/main.c``.
Written and checked against Zephyr 4.1 (``templates/zephyr/VERSION``).

Modules: ``model`` (what is collected; constants), ``core`` (naming, templates, thread parts),
``devicetree`` (facts → nodes, overlay lines, buffer placement), ``views`` (one view per operation),
``render`` (the four files). This module registers the lowerer; which operations Zephyr realizes on a
board is declared by each op spec (``ops/<family>/<op>.py``) and answered by ``ops.matrix``.
"""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.bind import BoundPlan
from rac_fw.domains.firmware.lower import (
    Lowered,
    LoweringError,
    realize_sections,
    register_framework,
    unsupported_operations,
)
from rac_fw.domains.firmware.lower.zephyr.model import ZEPHYR_VERSION, AppModel
from rac_fw.domains.firmware.lower.zephyr.render import Builder
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag

__all__ = ["ZEPHYR_VERSION", "ZephyrLowerer"]


class ZephyrLowerer:
    """Lowers plans to Zephyr applications for targets whose facts name a Zephyr board."""

    name = "zephyr"

    def lower(self, bound: BoundPlan) -> Lowered:
        """Render the app for a plan validated and bound for its target."""
        problems = unsupported_operations(bound)
        if bound.target.board.zephyr_board is None:
            raise LoweringError(
                [Evidence(code="E_TARGET_UNSUPPORTED", message=f"{bound.target.id} names no Zephyr board")]
            )
        if problems:
            raise LoweringError(problems)
        builder = Builder(bound, AppModel())
        # Handoff queues and locks come first: the ISRs and threads of other operations use them.
        ordered = sorted(enumerate(bound.plan.operations), key=lambda item: not spec(item[1].op).has(Flag.HANDOFF))
        for index, op in ordered:
            builder.lower_op(index, op)
        realize_sections(builder, self.name)
        return builder.render()


register_framework("zephyr", ZephyrLowerer())
