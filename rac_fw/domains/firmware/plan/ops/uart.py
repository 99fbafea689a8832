"""UART operations: polled print, interrupt-driven receive into a ring, line-based command read."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority, Message, PeripheralName

Baud = Annotated[
    int | None,
    Field(
        ge=300,
        le=4_000_000,
        description="Line rate in baud; None = the board console's rate. Must be within 2 % of what "
        "the UART's divider can produce from its clock (E_BAUD_ERROR otherwise).",
    ),
]
UartInstance = Annotated[
    PeripheralName | None,
    Field(
        description="UART instance (USART2, UARTE1, UART1…); None = the board console UART. A "
        "non-console instance needs its TX/RX pins in resources.pins with functions like USART2_TX.",
    ),
]


class UartPrint(Operation):
    """Print ``message`` plus a newline with polled (blocking, thread-context) output."""

    op: Literal["uart_print"]
    uart: UartInstance = None
    message: Message
    baud: Baud = None
    repeat_interval_ms: int | None = Field(
        default=None, ge=1, le=3_600_000, description="Reprint every interval; None = print once."
    )


class UartRxIrq(Operation):
    """Receive bytes in the UART interrupt into a ring buffer of ``ring_bytes``; optionally echo them."""

    op: Literal["uart_rx_irq"]
    uart: UartInstance = None
    ring_bytes: int = Field(ge=8, le=4096, description="Receive ring capacity in bytes (power of two best).")
    echo: bool = Field(default=False, description="Send each received byte back (from thread context).")
    baud: Baud = None
    irq_priority: IrqPriority | None = None


class UartLineRead(Operation):
    """Read newline-terminated command lines of at most ``max_line`` bytes (longer lines are dropped)."""

    op: Literal["uart_line_read"]
    uart: UartInstance = None
    max_line: int = Field(ge=2, le=512, description="Longest accepted line in bytes, excluding newline.")
    baud: Baud = None
    timeout_ms: int | None = Field(
        default=None, ge=1, le=3_600_000, description="Give up waiting for a line after this; None = wait."
    )
