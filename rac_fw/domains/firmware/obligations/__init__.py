"""Obligations: the plan checked against the target facts, every violation returned as repair evidence.

Each concern is one module; those that judge the whole plan expose ``check(plan, target, framework) ->
list[Evidence]`` (``RULES``), and an operation's own rules are its spec's ``checks`` (run by ``specs``),
which ask the concern modules for what several operations share (``timing.timer_period``,
``references.References``…). :func:`check` runs them all and returns every violation at once
(locations are plan field paths such as ``operations[2].baud``; each relaxation carries a patch over the
plan dict). :func:`placement` and
:func:`buffer_needs` are the single source of buffer placement, alignment and cache maintenance.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations import (
    bus,
    dma,
    instances,
    irq,
    memory,
    peripherals,
    pins,
    promise,
    radio,
    references,
    specs,
    support,
)
from rac_fw.domains.firmware.obligations.incremental import Units
from rac_fw.domains.firmware.placement import BufferNeeds, buffer_controller, buffer_needs, placement
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.derived import validation
from rac_fw.domains.firmware.plan.model import Plan

Rule = Callable[[Plan, Target, str], list[Evidence]]


class Split(Protocol):
    """A rule module judged in parts (``obligations.incremental``)."""

    def plan_units(self) -> list[tuple[Hashable, Rule]]: ...

    def operation_units(self, index: int, op: Operation) -> list[tuple[Hashable, Rule]]: ...

#: Every obligation, in reporting order (names and support first: later rules skip what they flag).
RULES: tuple[Rule, ...] = (
    support.check,
    specs.check,
    references.check,
    peripherals.check,
    instances.check,
    pins.check,
    radio.check,
    dma.check,
    memory.check,
    irq.check,
    bus.check,
)

#: Every evidence code the shared obligation modules can emit.
_SHARED_CODES = (
    "E_TARGET_UNSUPPORTED",
    "E_DUPLICATE_NAME",
    "E_UNKNOWN_RESOURCE",
    "E_THREAD_UNUSED",
    "E_NO_PERIPHERAL",
    "E_PERIPHERAL_SHARED",
    "E_UNKNOWN_PIN",
    "E_PIN_CONFLICT",
    "E_PIN_FUNCTION",
    "E_ANALOG_PIN",
    "E_PIN_RESERVED",
    "E_PIN_STRAPPING",
    "E_NFC_PIN",
    "E_RADIO_CONFLICT",
    "E_DMA_UNREACHABLE",
    "E_DMA_LENGTH",
    "E_DMA_ALIGNMENT",
    "E_CACHE_COHERENCE",
    "E_RAM_BUDGET",
    "E_STACK_SIZE",
    "E_IRQ_PRIORITY",
    "E_I2C_ADDRESS",
    "E_CLOCK_RANGE",
)

#: Every evidence code the obligations can emit: the shared modules', then the specs' own.
CODES = tuple(dict.fromkeys(_SHARED_CODES + specs.codes()))

__all__ = [
    "CODES",
    "RULES",
    "BufferNeeds",
    "buffer_controller",
    "buffer_needs",
    "check",
    "placement",
    "resolve_framework",
    "violations",
]


def resolve_framework(plan: Plan, target: Target, framework: str | None = None) -> str:
    """The framework a plan is checked and lowered for: explicit, else the plan's, else the target's default."""
    return framework or plan.framework or target.frameworks[0]


def violations(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Every rule's violations with the relaxations the rules propose, untested."""
    found: list[Evidence] = []
    with validation():
        for rule in RULES:
            found.extend(rule(plan, target, framework))
    return found


#: The rules judged in parts when candidates are judged by difference (``incremental``): modules with
#: ``plan_units()`` and ``operation_units(index, op)``; the other rules are one unit each.
_SPLIT: dict[Rule, Split] = {
    module.check: module for module in (specs, pins, support, references, irq)
}


def _plan_units() -> list[tuple[Hashable, Rule]]:
    found: list[tuple[Hashable, Rule]] = []
    for number, rule in enumerate(RULES):
        split = _SPLIT.get(rule)
        found += split.plan_units() if split is not None else [(("rule", number), rule)]
    return found


def _operation_units(index: int, op: Operation) -> list[tuple[Hashable, Rule]]:
    return [unit for split in _SPLIT.values() for unit in split.operation_units(index, op)]


#: :func:`violations` as units for ``obligations.incremental``.
UNITS = Units(_plan_units, _operation_units)


def check(
    plan: Plan, target: Target, framework: str | None = None, accepts: promise.Acceptor | None = None
) -> list[Evidence]:
    """Every obligation violated by ``plan`` on ``target`` under ``framework`` (empty = valid), each
    offering only the relaxations that make the plan validate (``promise.kept``); ``accepts`` is what
    judges a plan after the obligations (the pipeline's lowering), so relaxations satisfy it too."""
    chosen = resolve_framework(plan, target, framework)
    with validation():
        return promise.kept(plan, target, chosen, violations(plan, target, chosen), violations, UNITS, accepts)
