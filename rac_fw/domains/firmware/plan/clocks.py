"""The clock tree a plan runs: the framework's default clock setup with what the plan's operations set.

An operation that changes clocks (``core_clock``: a PLL and bus prescalers) declares it in its spec
(``OpSpec.clocks``); this module lays those domains over the facts' ``default_hz`` and hands out one
``facts.query.Clocks`` view. Every check that derives timing from a clock (UART baud error, counter and PWM
prescaler ranges, SPI dividers, SysTick, cycle-counter wraps, counter alarms, CAN bit timing) and every
lowering that computes a divisor at generation time asks this one view, so a core clock request moves them
together with the clock tree the lowering programs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.domains.firmware.facts.query import Clocks
from rac_fw.domains.firmware.plan.registry import spec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.model import Plan


def plan_clocks(plan: Plan, target: Target, framework: str) -> Clocks:
    """The clocks ``plan`` runs on ``target`` under ``framework``: an operation's ``clocks`` count only where
    the framework realizes it (elsewhere the support rule refuses the plan and the defaults stand)."""
    set_hz: dict[str, int] = {}
    for op in plan.operations:
        found = spec(op.op)
        if found.clocks is not None and found.realization(framework) is not None:
            set_hz.update(found.clocks(op, target, framework))
    return Clocks(target, framework, set_hz)
