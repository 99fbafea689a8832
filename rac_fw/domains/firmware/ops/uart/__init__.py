"""UART operations: polled print, interrupt-driven receive into a ring, line-based command read.

This package holds one op spec per module; shared field types live here."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rac_fw.domains.firmware.plan.fields import PeripheralName

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

# --- Zephyr realization constants shared by the receive operations -----------------------------------
#: DMA reception through the asynchronous UART API hands bytes to threads through a ring buffer.
UART_ASYNC_KCONFIG = ("CONFIG_UART_ASYNC_API", "CONFIG_RING_BUFFER")
#: How often the main loop drains a UART receive ring when no handoff thread does it (ms).
UART_DRAIN_MS = 10
#: Characters of line silence after which the async UART driver reports what it has received.
UART_RX_IDLE_CHARS = 10
