"""Zephyr lowering: a validated plan plus target facts → a complete Zephyr application directory.

The output is ``zephyr_app/``'s CMakeLists.txt plus a ``prj.conf`` holding exactly the Kconfig symbols
the operations need, a ``boards/<board>.overlay`` with the devicetree nodes the C relies on
(``zephyr,user`` io-channels and ADC channel nodes, a UART's ``dmas`` route, controller ``status``),
and ``src/main.c``.
Written and checked against Zephyr 4.1 (``templates/zephyr/VERSION``).

Modules: ``model`` (what is collected; constants), ``core`` (naming, templates, thread parts),
``devicetree`` (facts → nodes, overlay lines, buffer placement), ``views`` (one view per operation),
``render`` (the four files). This module registers the lowerer and says which operations it supports.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.lower import Lowered, LoweringError, register_framework
from rac_fw.domains.firmware.lower.zephyr.devicetree import console_rx_route
from rac_fw.domains.firmware.lower.zephyr.model import FAMILY, SENSOR_LABELS, ZEPHYR_VERSION, AppModel, labels
from rac_fw.domains.firmware.lower.zephyr.render import Builder
from rac_fw.domains.firmware.plan.model import Plan

__all__ = ["FAMILY", "ZEPHYR_VERSION", "ZephyrLowerer"]


class ZephyrLowerer:
    """Lowers plans to Zephyr applications for targets whose facts name a Zephyr board."""

    name = "zephyr"

    # --- what can exist on which target (obligations ask this) -------------------------------
    def supports(self, op_name: str, target: Target) -> bool:
        """True when ``op_name`` can be realized with Zephyr on ``target`` (decided from the facts)."""
        if target.board.zephyr_board is None or "zephyr" not in target.frameworks:
            return False
        family = FAMILY.get(op_name)
        if family is None:
            return False
        operation_check = _OPERATION_SUPPORT.get(op_name)
        if operation_check is not None and not operation_check(target):
            return False
        check = _SUPPORT.get(family)
        return check(target) if check is not None else True

    # --- lowering ------------------------------------------------------------------------------
    def lower(self, plan: Plan, target: Target) -> Lowered:
        """Render the app for ``plan`` (already validated against ``target``'s obligations)."""
        app = AppModel()
        problems: list[Evidence] = []
        for index, op in enumerate(plan.operations):
            if not self.supports(op.op, target):
                problems.append(
                    Evidence(
                        code="E_TARGET_UNSUPPORTED",
                        message=f"{op.op} cannot be realized with Zephyr on {target.id}",
                        location=f"operations[{index}]",
                        objects=[op.op, target.id],
                        relaxations=[
                            Relaxation(
                                description=f"remove operations[{index}] ({op.op})",
                                patch=[{"op": "remove", "path": ["operations", index]}],
                            )
                        ],
                    )
                )
        if problems:
            raise LoweringError(problems)
        builder = Builder(plan, target, app)
        # Handoff queues and locks come first: the ISRs and threads of other operations use them.
        for index, op in enumerate(plan.operations):
            if op.op == "isr_handoff":
                builder.lower_op(index, op)
        for index, op in enumerate(plan.operations):
            if op.op != "isr_handoff":
                builder.lower_op(index, op)
        return builder.render()


def _has_label(*patterns: str) -> Callable[[Target], bool]:
    """A support check: the board has a node label or alias matching one of ``patterns``."""

    def check(target: Target) -> bool:
        known = labels(target) | set(target.board.dt_aliases)
        return any(re.fullmatch(p, label) for p in patterns for label in known)

    return check


#: Family → what the board devicetree must have for it (families not listed need only the kernel).
_SUPPORT: dict[str, Callable[[Target], bool]] = {
    "uart": lambda t: t.board.console is not None or "zephyr,console" in t.board.dt_chosen,
    "i2c": _has_label(r"i2c\d*"),
    "spi": _has_label(r"spi\d*"),
    "adc": _has_label(r"adc\d*"),
    "pwm": _has_label(r"pwm-led\d+", r"\w+_pwm_led"),
    "watchdog": _has_label(r"watchdog0", r"iwdg\d*", r"wdt\d*"),
    "dma": lambda t: any(d.memory_to_memory and d.name.lower() in labels(t) for d in t.dma),
    "sensor": _has_label(*SENSOR_LABELS),
}

#: Operation → what it needs beyond its family: DMA reception needs a known DMA route for the console RX.
_OPERATION_SUPPORT: dict[str, Callable[[Target], bool]] = {
    "dma_periph_rx": lambda t: console_rx_route(t) is not None,
}

register_framework("zephyr", ZephyrLowerer())
