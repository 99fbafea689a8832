"""DMA operations: memory-to-memory copy and peripheral-to-memory reception."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import FactName, IrqPriority, Name, SignalName


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


class DmaPeriphRx(Operation):
    """Let a peripheral write into ``buffer`` by DMA (e.g. ADC1 conversions, USART2_RX bytes)."""

    op: Literal["dma_periph_rx"]
    peripheral: SignalName = Field(description="DMA request source: ADC1, USART2_RX, SPI1_RX, SAADC…")
    buffer: Name = Field(description="A dma_rx buffer (resources.buffers).")
    circular: bool = Field(default=True, description="Restart at the buffer start after the last item.")
    controller: FactName | None = Field(
        default=None, description="DMA controller; None = buffer.dma or the target's default for it."
    )
    irq_priority: IrqPriority | None = None
