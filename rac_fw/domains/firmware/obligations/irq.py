"""Interrupt obligations, for every operation with an ``irq_priority``.

E_IRQ_PRIORITY: an interrupt that hands work to the RTOS must sit in the priority band the RTOS
manages (Zephyr reserves the levels above its IRQ offset for zero-latency IRQs that must not call the
kernel; ESP-IDF handlers written in C and calling FreeRTOS must use levels 1-3). What may not happen in
interrupt context (E_ISR_BLOCKING) is each operation's own rule (``isr_handoff``, ``log``).
"""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import irq_range
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """IRQ priorities against the framework's band."""
    found: list[Evidence] = []
    band = irq_range(target, framework)
    for i, op in enumerate(plan.operations):
        base: Path = ["operations", i]
        priority = getattr(op, "irq_priority", None)
        if band is not None and priority is not None and not band.lowest <= priority <= band.highest:
            path: Path = [*base, "irq_priority"]
            nearest = min(max(priority, band.lowest), band.highest)
            found.append(
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
            )
    return found
