"""Interrupt obligations.

E_IRQ_PRIORITY: an interrupt that hands work to the RTOS must sit in the priority band the RTOS
manages (Zephyr reserves the levels above its IRQ offset for zero-latency IRQs that must not call the
kernel; ESP-IDF handlers written in C and calling FreeRTOS must use levels 1-3).
E_ISR_BLOCKING: nothing in interrupt context may wait: a handoff's put must not block, and logging
from an ISR is forbidden (it takes locks and may block or allocate).
"""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import irq_range
from rac_fw.domains.firmware.obligations.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.ops.handoff.isr_handoff import IsrHandoff
from rac_fw.domains.firmware.ops.log.log import Log
from rac_fw.domains.firmware.plan.model import Plan


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """IRQ priorities against the framework's band; blocking work in ISR context."""
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
        if isinstance(op, IsrHandoff) and op.put_timeout_ms > 0:
            path = [*base, "put_timeout_ms"]
            found.append(
                violation(
                    "E_ISR_BLOCKING",
                    f"the {op.mechanism} put in {op.source}'s ISR would wait up to "
                    f"{op.put_timeout_ms} ms; an ISR must never block (drop or count the event when full)",
                    path,
                    [op.source, op.thread],
                    [measure("wait", op.put_timeout_ms, "ms")],
                    [relax("put without waiting (K_NO_WAIT / 0 ticks)", replace(path, 0))],
                )
            )
        if isinstance(op, Log) and op.in_isr_of is not None:
            path = [*base, "in_isr_of"]
            found.append(
                violation(
                    "E_ISR_BLOCKING",
                    f"logging inside {op.in_isr_of}'s interrupt handler can block and allocate; "
                    "log from a thread fed by an isr_handoff",
                    path,
                    [op.in_isr_of, op.name or op.op],
                    relaxations=[relax("log from thread context", remove(path))],
                )
            )
    return found
