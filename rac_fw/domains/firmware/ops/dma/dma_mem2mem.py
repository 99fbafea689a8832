"""The ``dma_mem2mem`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import Flag, OpSpec
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import FactName, IrqPriority, Name


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


SPEC = OpSpec(model=DmaMem2Mem, family="dma", flags=frozenset({Flag.ISR_CONTEXT}))
