"""The ``sw_irq`` operation: an interrupt software raises on purpose, for a behaviour to count or react to."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from rac_fw.domains.firmware.facts.query import software_irq
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import IrqPriority
from rac_fw.domains.firmware.plan.spec import Action, Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.chip import SoftwareInterrupt
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class SwIrq(Operation):
    """An interrupt line software pends: a behaviour's ``act: NAME.fire`` raises it, its ``irq`` event runs.

    The line is the chip's software-pendable one (``rac-fw targets show``: ``nvic.software_irq``: a vector
    reserved on the part or a software-interrupt line), enabled at ``irq_priority``. Firing it N times and
    counting in the handler proves the interrupt path end to end (NVIC set-pending on Cortex-M). On Zephyr
    the kernel's ``irq_offload`` raises it (the exception the kernel reserves for that; ``irq_priority``
    does not apply there); Zephyr offers it to tests only, so the app is marked one (``CONFIG_TEST``). On
    ESP-IDF it is one of the core's software interrupts (``interrupts.software``: ``esp_intr_alloc`` on its
    source, pended through the core's INTSET register), whose level is fixed: ``irq_priority`` picks the line
    of that level (default: the lowest). On STM32 HAL, ST's start-up file reserves the line's vector, so
    main() runs from a RAM copy of the vector table with the line's handler (it.c) installed before it enables
    the line.
    """

    op: Literal["sw_irq"]
    irq_priority: IrqPriority | None = None


def _has_line(target: Target) -> bool:
    return software_irq(target) is not None


def _baremetal(b: BaremetalBuild, index: int, op: SwIrq) -> None:
    soft = software_irq(b.target)
    if soft is None:
        raise b.error(f"{b.target.id} names no software-pendable interrupt line (nvic.software_irq)")
    ctx = b.base(index, op) | {
        "line": soft.line, "handler": soft.handler, "priority": b.priority(op.irq_priority),
        "hooks": b.hooks(index, "irq"), "outputs": {},
    }  # fmt: skip
    b.emit("ops/sw_irq", ctx)


#: ARMv7-M (ARM DDI 0403E B3.2.5, VTOR.TBLOFF): a relocated vector table is aligned to its size rounded up to a
#: power of two, 128 bytes at least; the 16 system exceptions come before the device's lines.
VECTOR_TABLE_MIN_ALIGN, SYSTEM_VECTORS = 128, 16


def _hal(b: HalBuild, index: int, op: SwIrq) -> dict[str, Any]:
    """The software-pended line (``facts.query.software_irq``), the RAM vector table main() installs its handler
    in (``templates/hal/ops.c.j2`` sw_irq) and the it.c handler that calls ``<sym>_irq``."""
    view = b.base_view(index, op)
    soft = software_irq(b.target)
    where = f"operations[{index}]"
    if soft is None:
        raise b.unsupported(where, f"{b.target.id} names no software-pendable interrupt line (nvic.software_irq)")
    if b.soft_irqs:
        raise b.unsupported(where, f"line {soft.line} already serves {b.soft_irqs[0]['sym']}: the chip has one "
                            "software-pended line; fire that operation")  # fmt: skip
    vectors = SYSTEM_VECTORS + b.target.irq_count
    view.update(line=soft.line, handler=soft.handler, vectors=vectors, dcache=b.cache_on,
                align=max(VECTOR_TABLE_MIN_ALIGN, 1 << math.ceil(math.log2(vectors * 4))),
                priority=5 if op.irq_priority is None else op.irq_priority, hooks=b.hooks(index, "irq"), outputs={})
    b.soft_irqs.append({"sym": view["sym"], "line": soft.line, "handler": soft.handler, "call": f"{view['sym']}_irq"})
    return view  # fmt: skip


def _offload_priority(plan: Plan, target: Target, index: int, op: SwIrq) -> list[Evidence]:
    """Zephyr's irq_offload raises the exception the kernel reserves for it, at the priority the kernel fixes."""
    if op.irq_priority is None:
        return []
    path: list[str | int] = ["operations", index, "irq_priority"]
    return [violation("E_TARGET_UNSUPPORTED", "Zephyr raises a software interrupt with irq_offload, whose priority "
                      "the kernel fixes: irq_priority does not apply", path, [op.name or "sw_irq", "irq_priority"],
                      relaxations=[relax("drop irq_priority", remove(path))])]  # fmt: skip


def _zephyr(b: ZephyrBuilder, index: int, op: SwIrq) -> dict[str, Any]:
    b.app.includes.add("zephyr/irq_offload.h")
    b.app.need("sw_irq", "CONFIG_TEST", "CONFIG_IRQ_OFFLOAD")  # IRQ_OFFLOAD depends on TEST (arch/Kconfig)
    return {"id": b.ids[index], "hooks": b.hooks(index, "irq"), "outputs": {}}


def _software_line(target: Target, op: SwIrq) -> SoftwareInterrupt | None:
    """The core's software interrupt at ``irq_priority`` (the lowest level when the plan names none)."""
    lines = target.interrupts.software if target.interrupts is not None else ()
    return next((s for s in lines if op.irq_priority in (None, s.level)), None)


def _has_software(target: Target) -> bool:
    return bool(target.interrupts is not None and target.interrupts.software)


def _software_level(plan: Plan, target: Target, index: int, op: SwIrq) -> list[Evidence]:
    """A software interrupt's level is fixed by the core: ``irq_priority`` must be one of theirs."""
    if _software_line(target, op) is not None:
        return []
    path: list[str | int] = ["operations", index, "irq_priority"]
    levels = [s.level for s in target.interrupts.software] if target.interrupts is not None else []
    return [violation("E_TARGET_UNSUPPORTED", f"{target.id}'s software interrupts have the fixed levels "
                      f"{', '.join(map(str, levels))}, not {op.irq_priority}", path,
                      [op.name or "sw_irq", "irq_priority"],
                      relaxations=[relax(f"use level {level}", replace(path, level)) for level in levels])]  # fmt: skip


def _espidf(b: EspIdfBuild, index: int, op: SwIrq) -> dict[str, Any]:
    line = _software_line(b.target, op)
    assert line is not None  # _software_level refused the plan otherwise
    return {"line": line.cpu_line, "level": line.level, "source": line.source,
            "flags": f"ESP_INTR_FLAG_LEVEL{line.level}", "hooks": b.hooks(index, "irq"), "outputs": {}}  # fmt: skip


SPEC = OpSpec(
    model=SwIrq,
    family="events",
    flags=frozenset({Flag.ISR_CONTEXT}),
    events=("irq",),
    actions={"fire": Action("Pend the interrupt: its handler runs at once (above the thread's priority).",
                            raises=("irq",))},  # fmt: skip
    realizations={
        "zephyr": Realization(template="sw_irq", view=_zephyr, admits=_offload_priority, quiet=True,
                              behaviour=frozenset({"event:irq", "action:fire"})),
        "espidf": Realization(template="sw_irq", view=_espidf, available=_has_software, admits=_software_level,
                              quiet=True, behaviour=frozenset({"event:irq", "action:fire"})),
        "hal": Realization(template="ops", view=_hal, available=_has_line, quiet=True,
                           behaviour=frozenset({"event:irq", "action:fire"})),
        "baremetal": Realization(template="ops/sw_irq", view=_baremetal, available=_has_line,
                                 behaviour=frozenset({"event:irq", "action:fire"})),  # fmt: skip
    },
)

