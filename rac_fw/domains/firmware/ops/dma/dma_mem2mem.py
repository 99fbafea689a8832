"""The ``dma_mem2mem`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import dt_labels, has_registers, memory_to_memory_controllers
from rac_fw.domains.firmware.ops.dma import PRIORITY_FROM_CONTROLLER, zephyr_dma_node
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import FactName, IrqPriority, Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


class DmaMem2Mem(Operation):
    """Copy ``src`` to ``dst`` by DMA, wait for the completion interrupt, and optionally compare them."""

    op: Literal["dma_mem2mem"]
    src: Name = Field(description="Source buffer (resources.buffers).")
    dst: Name = Field(description="Destination buffer (resources.buffers), at least as large as src.")
    controller: FactName | None = Field(
        default=None, description="DMA controller (e.g. DMA2); None = the first one able to do m2m."
    )
    verify: bool = Field(default=True, description="Compare dst with src after completion.")
    irq_priority: IrqPriority | None = None


def _stream_registers(target: Target) -> bool:
    """The bare-metal template programs an STM32 DMA stream: the facts must hold its registers."""
    return any(has_registers(target, d.name, "ST0_CR") for d in memory_to_memory_controllers(target))


def _zephyr(b: ZephyrBuilder, index: int, op: DmaMem2Mem) -> dict[str, Any]:
    b.app.includes.update({"zephyr/drivers/dma.h", "string.h", "zephyr/sys/atomic.h"})
    src = b.dma_buffer(op.src, f"operations[{index}].src")
    dst = b.dma_buffer(op.dst, f"operations[{index}].dst")
    controller = b.dma_controller(index, op)
    zephyr_dma_node(b, controller)
    return {
        "controller": controller,
        "src": src,
        "dst": dst,
        "length": min(src["plan_size"], dst["plan_size"]),
        "verify": op.verify,
        "timeout_ms": 100 + src["plan_size"] // 1000,
        "handoffs": b.handoffs(index),
        "setup": True,
        "step": {"period_ms": None},
    }


def _espidf(b: EspIdfBuild, index: int, op: DmaMem2Mem) -> dict[str, Any]:
    src, dst = b.buffer(op.src, f"operations[{index}].src"), b.buffer(op.dst, f"operations[{index}].dst")
    return {"src": src, "dst": dst, "bytes": min(src["size"], dst["size"]), "task": b.thread(None, b.symbol(index, op))}


def _hal(b: HalBuild, index: int, op: DmaMem2Mem) -> dict[str, Any]:
    where = f"operations[{index}]"
    view = b.base_view(index, op)
    view["src"], view["dst"] = b.buffer(op.src, f"{where}.src"), b.buffer(op.dst, f"{where}.dst")
    element = view["src"]["element"]
    view["count"] = min(view["src"]["size"], view["dst"]["size"]) // element
    view["width"] = {1: "BYTE", 2: "HALFWORD", 4: "WORD"}[element]
    view["dma"] = b.dma_stream(None, op.controller, where)
    view["dma"].update(owner=view, priority=5 if op.irq_priority is None else op.irq_priority)
    # The outcome ("dma copy verified/mismatch/failed") goes to the board console when there is one.
    view["uart"] = b.uart(None, None, where) if b.target.board.console else None
    view["text_bytes"] = len("dma copy mismatch\r\n")
    return view


def _baremetal(b: BaremetalBuild, index: int, op: DmaMem2Mem) -> None:
    target = b.target
    layouts = {b.name: b for b in b.dma}
    src, dst = layouts.get(op.src), layouts.get(op.dst)
    if src is None or dst is None:
        raise b.error("src/dst must be DMA buffers in resources.buffers")
    instance = src.master
    regs = b.regs(instance)
    stream = "ST0"
    buffer = b.plan.buffer(op.src)
    element = buffer.element_bytes if buffer else 1
    size_bytes = buffer.size_bytes if buffer else src.size
    # Every stream-0 flag-clear bit (CFEIF0, CDMEIF0, CTEIF0, CHTIF0, CTCIF0), by name, lowest bit first.
    clears = sorted((lsb, name) for name, (lsb, _) in regs.regs["LIFCR"].items() if name.endswith("IF0"))
    ctx = b.base(index, op) | {
        "inst": instance,
        "m": regs.m,
        "p": regs.p,
        "gate": b.derive.clock_gate(target, instance),
        "stream": stream,
        "isr": "LISR",
        "ifcr": "LIFCR",
        "tc_mask": regs.m("LISR", "TCIF0"),
        "te_mask": regs.m("LISR", "TEIF0"),
        "clear_mask": " | ".join(regs.m("LIFCR", name) for _, name in clears),
        "src": b.buffer_decl(src),
        "dst": b.buffer_decl(dst),
        "bytes": size_bytes,
        "element": element,
        "transfers": size_bytes // element,
        "size_code": {1: 0, 2: 1, 4: 2}[element],
        "verify": op.verify,
        "budget": b.budget_us(b.PERIPHERAL_TIMEOUT_US),
    }
    b.emit("ops/dma_mem2mem", ctx)


def _names(plan: Plan, target: Target, framework: str, index: int, op: DmaMem2Mem) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: both buffers are declared DMA buffers; a named controller copies memory to memory."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    roles = ("dma_mem", "dma_rx", "dma_tx")
    refs.buffer(op.src, [*base, "src"], roles)
    refs.buffer(op.dst, [*base, "dst"], roles)
    refs.op_controller(op.controller, [*base, "controller"], [c.name for c in target.dma if c.memory_to_memory])
    return refs.found

def _copy(plan: Plan, target: Target, framework: str, index: int, op: DmaMem2Mem) -> list[Evidence]:
    """E_DMA_M2M_UNSUPPORTED: the copy needs a controller that can copy memory to memory (not STM32F4
    DMA1, not nRF); E_DMA_LENGTH: the destination must hold the whole source."""
    from rac_fw.domains.firmware.placement import controller_named  # it imports this module's model

    found: list[Evidence] = []
    base: Path = ["operations", index]
    capable = [c for c in target.dma if c.memory_to_memory]
    named = op.controller or next((b.dma for b in map(plan.buffer, (op.src, op.dst)) if b and b.dma), None)
    controller = controller_named(target, named) if named else (capable[0] if capable else None)
    if not capable:
        found.append(
            violation(
                "E_DMA_M2M_UNSUPPORTED",
                f"no DMA controller of {target.id} can copy memory to memory "
                f"({', '.join(c.name for c in target.dma) or 'no DMA'})",
                base,
                [op.op, target.id],
                relaxations=[relax("drop the DMA copy (copy with the CPU instead)", remove(base))],
            )
        )
    elif controller is not None and not controller.memory_to_memory:
        path: Path = [*base, "controller"]
        found.append(
            violation(
                "E_DMA_M2M_UNSUPPORTED",
                f"{controller.name} cannot do memory-to-memory transfers; {', '.join(c.name for c in capable)} can",
                path,
                [controller.name, op.src, op.dst],
                relaxations=[relax(f"use {c.name}", replace(path, c.name)) for c in capable],
            )
        )
    src, dst = plan.buffer(op.src), plan.buffer(op.dst)
    if src is not None and dst is not None and dst.size_bytes < src.size_bytes:
        path = ["resources", "buffers", plan.resources.buffers.index(dst), "size_bytes"]
        found.append(
            violation(
                "E_DMA_LENGTH",
                f"destination {dst.name} ({dst.size_bytes} bytes) is shorter than source {src.name} "
                f"({src.size_bytes} bytes)",
                path,
                [dst.name, src.name],
                [measure("shortfall", src.size_bytes - dst.size_bytes, "bytes")],
                [relax(f"make {dst.name} {src.size_bytes} bytes", replace(path, src.size_bytes))],
            )
        )
    return found

SPEC = OpSpec(
    model=DmaMem2Mem,
    family="dma",
    needs="dma",
    flags=frozenset({Flag.ISR_CONTEXT}),
    realizations={
        "zephyr": Realization(
            template="dma",
            view=_zephyr,
            available=lambda t: any(d.name.lower() in dt_labels(t) for d in memory_to_memory_controllers(t)),
            unrealized=PRIORITY_FROM_CONTROLLER,
        ),
        "espidf": Realization(
            template="dma",
            view=_espidf,
            unrealized={"irq_priority": "esp_async_memcpy takes no interrupt priority: the GDMA driver sets it"},
        ),
        "hal": Realization(template="ops", view=_hal),
        "baremetal": Realization(template="ops/dma_mem2mem", view=_baremetal, available=_stream_registers),
    },
    checks=(_names, _copy),
    codes=("E_UNKNOWN_RESOURCE", "E_DMA_M2M_UNSUPPORTED", "E_DMA_LENGTH"),
)
