"""The ``uart_rx_irq`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import console_uart_known
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.ops.uart import Baud, UartInstance
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority


class UartRxIrq(Operation):
    """Receive bytes in the UART interrupt into a ring buffer of ``ring_bytes``; optionally echo them."""

    op: Literal["uart_rx_irq"]
    uart: UartInstance = None
    ring_bytes: int = Field(ge=8, le=4096, description="Receive ring capacity in bytes (power of two best).")
    echo: bool = Field(default=False, description="Send each received byte back (from thread context).")
    baud: Baud = None
    irq_priority: IrqPriority | None = None


SPEC = OpSpec(
    model=UartRxIrq,
    family="uart",
    flags=frozenset({Flag.ISR_CONTEXT, Flag.RX_RING, Flag.CONSOLE}),
    realizations={
        "zephyr": Realization(template="uart", available=console_uart_known),
        "espidf": Realization(template="uart"),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/uart_rx_irq"),
    },
)
