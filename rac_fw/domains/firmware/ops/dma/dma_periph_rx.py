"""The ``dma_periph_rx`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import console_rx_dma, console_uart_known
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import FactName, IrqPriority, Name, SignalName


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


SPEC = OpSpec(
    model=DmaPeriphRx,
    family="dma",
    flags=frozenset({Flag.ISR_CONTEXT, Flag.RX_RING}),
    realizations={
        "zephyr": Realization(
            template="uart", available=lambda t: console_uart_known(t) and console_rx_dma(t) is not None
        ),
        "hal": Realization(template="ops"),
    },
)
