"""The ``dma_mem2mem`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import dt_labels, has_registers, memory_to_memory_controllers
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import FactName, IrqPriority, Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


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
    return {
        "controller": b.dma_controller(index, op),
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


SPEC = OpSpec(
    model=DmaMem2Mem,
    family="dma",
    flags=frozenset({Flag.ISR_CONTEXT}),
    realizations={
        "zephyr": Realization(
            template="dma",
            view=_zephyr,
            available=lambda t: any(d.name.lower() in dt_labels(t) for d in memory_to_memory_controllers(t)),
        ),
        "espidf": Realization(template="dma", view=_espidf),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/dma_mem2mem", available=_stream_registers),
    },
)
