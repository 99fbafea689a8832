"""The ``direct_irq`` operation: a direct (optionally zero-latency) interrupt handler on a named NVIC line.

Zephyr on Cortex-M (include/zephyr/arch/arm/irq.h @02d6d2020cb5): ``IRQ_DIRECT_CONNECT`` puts the handler
in the vector table itself (no common ISR wrapper); ``IRQ_ZERO_LATENCY`` runs it above ``irq_lock()``
at a fixed hardware level ("discarding what was supplied in the interrupt's priority argument" with
one zero-latency level), needs CONFIG_ZERO_LATENCY_IRQS, must return 0 and must not call
``ISR_DIRECT_PM()`` nor the kernel. Enabling zero-latency IRQs reserves one more level: every other
interrupt's highest usable priority drops by one (the chip's ``nvic.kernel_levels`` facts:
``max_irq_priority`` → ``max_irq_priority_zero_latency``).

Obligations of its own (all against the chip's NVIC facts): the line exists (E_UNKNOWN_RESOURCE) and
no other direct handler takes it (E_IRQ_IN_USE); a direct handler's priority lies in the kernel's band
(E_IRQ_PRIORITY); a zero-latency one states no priority (it would be discarded); and with a zero-latency
handler in the plan, every operation's ``irq_priority`` fits the narrowed band (E_IRQ_PRIORITY on that
operation, naming both). A thread-side trigger pends the line every ``trigger_period_ms``
(CMSIS ``NVIC_SetPendingIRQ``, Zephyr's own tests' idiom); the handler counts with an atomic
(LDREX/STREX, no lock), its value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.load import interrupts
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import FactName, IrqPriority
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.chip import KernelIrqLevels
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

IN_USE = "E_IRQ_IN_USE"


class DirectIrq(Operation):
    """A direct interrupt handler on the NVIC line ``irq`` (a vector name of the chip, e.g. ``SWI0_EGU0``),
    pended by software every ``trigger_period_ms``; it counts its runs (this operation's value).

    ``zero_latency`` makes it a zero-latency interrupt: it preempts even ``irq_lock()`` sections and must
    never call the kernel, and its priority is the hardware's fixed top level (state none). Otherwise
    ``priority`` (``irq_priority`` numbering: 0 is the most urgent the kernel allows) is required.
    """

    op: Literal["direct_irq"]
    irq: FactName = Field(description="The NVIC line by its vector name in the chip facts (SWI0_EGU0, EXTI0…).")
    priority: IrqPriority | None = None
    zero_latency: bool = Field(default=False, description="Run above irq_lock() (never calls the kernel).")
    trigger_period_ms: int = Field(default=100, ge=1, le=3_600_000, description="How often software pends it.")


def _levels(target: Target, framework: str) -> KernelIrqLevels | None:
    nvic = target.nvic
    return nvic.kernel_levels.get(framework) if nvic is not None else None


def _vectors(target: Target) -> dict[str, int]:
    return {name: number for number, name, _ in interrupts(target.id)}


def zero_latency_in(plan: Plan) -> list[int]:
    """Indices of the zero-latency handlers of the plan (they narrow every other IRQ's band)."""
    return [i for i, o in enumerate(plan.operations) if isinstance(o, DirectIrq) and o.zero_latency]


def _check(plan: Plan, target: Target, framework: str, index: int, op: DirectIrq) -> list[Evidence]:
    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    found: list[Evidence] = []
    vectors = _vectors(target)
    taken = {o.irq for i, o in enumerate(plan.operations) if isinstance(o, DirectIrq) and i != index}
    if vectors and op.irq not in vectors:
        free = [n for n in vectors if n not in taken][:3]
        found.append(
            violation(
                "E_UNKNOWN_RESOURCE",
                f"{label}: {target.id} has no interrupt line {op.irq!r}",
                [*base, "irq"],
                [label, op.irq],
                relaxations=[relax(f"use {n} (IRQ {vectors[n]})", replace([*base, "irq"], n)) for n in free],
            )
        )
    elif op.irq in taken:
        first = next(
            o.name or o.op
            for i, o in enumerate(plan.operations)
            if isinstance(o, DirectIrq) and o.irq == op.irq and i != index
        )
        free = [n for n in vectors if n not in taken and n != op.irq][:2]
        found.append(
            violation(
                IN_USE,
                f"{label} and {first} both install a direct handler on {op.irq}: a vector holds one",
                [*base, "irq"],
                [label, first, op.irq],
                relaxations=[relax(f"use {n} (IRQ {vectors[n]})", replace([*base, "irq"], n)) for n in free],
            )
        )
    levels = _levels(target, framework)
    if levels is None:
        return found
    if op.zero_latency and op.priority is not None:
        found.append(
            violation(
                "E_IRQ_PRIORITY",
                f"{label} is zero-latency: it runs at the fixed level {levels.zero_latency_priority} and its priority "
                f"{op.priority} would be discarded",
                [*base, "priority"],
                [label],
                relaxations=[relax("state no priority", remove([*base, "priority"]))],
            )
        )
    if not op.zero_latency:
        top = levels.max_irq_priority_zero_latency if zero_latency_in(plan) else levels.max_irq_priority
        if op.priority is None or op.priority > top:
            found.append(
                violation(
                    "E_IRQ_PRIORITY",
                    f"{label} needs a priority in 0-{top} on {target.id} with {framework}"
                    + (f", not {op.priority}" if op.priority is not None else ""),
                    [*base, "priority"],
                    [label],
                    [measure("highest", top, "level")]
                    + ([measure("priority", op.priority, "level")] if op.priority is not None else []),
                    [relax(f"use priority {top}", replace([*base, "priority"], top))],
                )
            )
    if op.zero_latency and index == zero_latency_in(plan)[0]:
        found += _narrowed_band(plan, index, op, levels)
    return found


def _narrowed_band(plan: Plan, index: int, op: DirectIrq, levels: KernelIrqLevels) -> list[Evidence]:
    """E_IRQ_PRIORITY on each other operation whose ``irq_priority`` no longer fits once zero-latency IRQs
    reserve their level (relaxations: the new highest level there, or no zero-latency handler)."""
    top = levels.max_irq_priority_zero_latency
    label = op.name or f"operations[{index}]"
    found = []
    for i, other in enumerate(plan.operations):
        priority = getattr(other, "irq_priority", None)
        if i == index or priority is None or priority <= top or priority > levels.max_irq_priority:
            continue
        path: list[str | int] = ["operations", i, "irq_priority"]
        found.append(
            violation(
                "E_IRQ_PRIORITY",
                f"{other.name or other.op}'s irq_priority {priority} fits 0-{levels.max_irq_priority}, but the "
                f"zero-latency handler {label} reserves one more level: 0-{top} remain "
                f"(_IRQ_PRIO_OFFSET {levels.irq_prio_offset} -> {levels.irq_prio_offset_zero_latency})",
                path,
                [other.name or other.op, label],
                [measure("priority", priority, "level"), measure("highest", top, "level")],
                [
                    relax(f"use irq_priority {top}", replace(path, top)),
                    relax(f"make {label} a plain direct IRQ", replace(["operations", index, "zero_latency"], False),
                          replace(["operations", index, "priority"], top)),
                ],
            )
        )
    return found


def _available(target: Target) -> bool:
    """A Cortex-M NVIC whose Zephyr priority levels the chip facts state, with a device interrupt list."""
    return _levels(target, "zephyr") is not None and bool(_vectors(target))


def _zephyr(b: ZephyrBuilder, index: int, op: DirectIrq) -> dict[str, Any]:
    b.app.includes.update({"zephyr/irq.h", "zephyr/sys/atomic.h", "cmsis_core.h"})
    if op.zero_latency:
        b.app.need("kernel", "CONFIG_ZERO_LATENCY_IRQS")
    return {
        "irq": _vectors(b.target)[op.irq],
        "vector": op.irq,
        "priority": 0 if op.zero_latency else op.priority,
        "zero_latency": op.zero_latency,
        "setup": True,
        "step": {"period_ms": op.trigger_period_ms},
    }


SPEC = OpSpec(
    model=DirectIrq,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={"zephyr": Realization(template="kernel", view=_zephyr, available=_available)},
    checks=(_check,),
    codes=("E_IRQ_PRIORITY", IN_USE, "E_UNKNOWN_RESOURCE"),
)
