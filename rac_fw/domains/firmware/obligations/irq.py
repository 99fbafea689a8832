"""Interrupt obligations, for every operation with an ``irq_priority``.

E_IRQ_PRIORITY: an interrupt that hands work to the RTOS must sit in the priority band the RTOS
manages (Zephyr reserves the levels above its IRQ offset for zero-latency IRQs that must not call the
kernel; ESP-IDF handlers written in C and calling FreeRTOS must use levels 1-3). What may not happen in
interrupt context (E_ISR_BLOCKING) is each operation's own rule (``isr_handoff``, ``log``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import irq_range
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """IRQ priorities against the framework's band."""
    return [e for i in range(len(plan.operations)) for e in _operation(i, plan, target, framework)]


def plan_units() -> list[tuple[Hashable, Callable[[Plan, Target, str], list[Evidence]]]]:
    """:func:`check` as units (``obligations.incremental``): none for the plan as a whole…"""
    return []


def operation_units(index: int, op: Operation) -> list[tuple[Hashable, Callable[[Plan, Target, str], list[Evidence]]]]:
    """…one per operation."""
    return [(("irq", index, op.op), partial(_operation, index))]


def _operation(i: int, plan: Plan, target: Target, framework: str) -> list[Evidence]:
    band = irq_range(target, framework)
    op = plan.operations[i]
    priority = getattr(op, "irq_priority", None)
    if band is None or priority is None or band.lowest <= priority <= band.highest:
        return []
    path: Path = ["operations", i, "irq_priority"]
    nearest = min(max(priority, band.lowest), band.highest)
    return [
        violation(
            "E_IRQ_PRIORITY",
            f"irq_priority {priority} is outside {band.lowest}-{band.highest} on {target.id} "
            f"with {framework}: {band.why}",
            path,
            [op.name or op.op],
            [
                measure("priority", priority, "level"),
                measure("lowest", band.lowest, "level"),
                measure("highest", band.highest, "level"),
            ],
            [relax(f"use irq_priority {nearest}", replace(path, nearest))],
        )
    ]
