"""The ``uart_line_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import console_uart_known
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.ops.uart import Baud, UartInstance
from rac_fw.domains.firmware.plan.base import Operation


class UartLineRead(Operation):
    """Read newline-terminated command lines of at most ``max_line`` bytes (longer lines are dropped)."""

    op: Literal["uart_line_read"]
    uart: UartInstance = None
    max_line: int = Field(ge=2, le=512, description="Longest accepted line in bytes, excluding newline.")
    baud: Baud = None
    timeout_ms: int | None = Field(
        default=None, ge=1, le=3_600_000, description="Give up waiting for a line after this; None = wait."
    )


SPEC = OpSpec(
    model=UartLineRead,
    family="uart",
    flags=frozenset({Flag.RX_RING, Flag.CONSOLE}),
    realizations={
        "zephyr": Realization(template="uart", available=console_uart_known),
        "espidf": Realization(template="uart"),
        "hal": Realization(template="ops"),
    },
)
