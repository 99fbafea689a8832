"""The ``uart_line_read`` operation: its model and its spec."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import console_uart_known
from rac_fw.domains.firmware.ops.uart import UART_DRAIN_MS, Baud, UartInstance, baud_error, zephyr_uart_mode
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class UartLineRead(Operation):
    """Read newline-terminated command lines of at most ``max_line`` bytes (longer lines are dropped)."""

    op: Literal["uart_line_read"]
    uart: UartInstance = None
    max_line: int = Field(ge=2, le=512, description="Longest accepted line in bytes, excluding newline.")
    baud: Baud = None
    timeout_ms: int | None = Field(
        default=None, ge=1, le=3_600_000, description="Give up waiting for a line after this; None = wait."
    )


def _zephyr(b: ZephyrBuilder, index: int, op: UartLineRead) -> dict[str, Any]:

    view = b.uart_rx(index, op)
    view.update(
        ring_bytes=max(16, 1 << (op.max_line + 1).bit_length()),
        max_line=op.max_line,
        timeout_ms=op.timeout_ms,
        setup=True,
        step={"period_ms": UART_DRAIN_MS},
    )
    return view


def _espidf(b: EspIdfBuild, index: int, op: UartLineRead) -> dict[str, Any]:
    sym, where = b.symbol(index, op), f"operations[{index}]"
    uart = b.uart(op.uart, op.baud, where, rx_ring=op.max_line * 2)
    if uart.setdefault("reader", sym) != sym:
        raise b.unsupported(where, f"UART{uart['port']} is already read by {uart['reader']}")
    return {"uart": uart, "task": b.thread(None, sym)}


def _hal(b: HalBuild, index: int, op: UartLineRead) -> dict[str, Any]:
    view = b.base_view(index, op)
    b.uart_rx_view(view, op, 2 ** math.ceil(math.log2(op.max_line + 2)), f"operations[{index}]")
    # The longer of the two replies, "line: <text>\r\n" and the overflow notice, plus the NUL.
    overflow = len(f"line longer than {op.max_line} bytes dropped\r\n")
    view.update(text_bytes=max(len("line: \r\n") + op.max_line, overflow) + 1, ticks=True)
    return view


def _instance(plan: Plan, target: Target, framework: str, index: int, op: UartLineRead) -> list[Evidence]:
    """A named UART must exist and have its pins declared (it receives: its TX and RX pins);
    the shared rule is the peripherals concern's."""
    from rac_fw.domains.firmware.obligations.peripherals import uart_named  # runs after the plan model exists

    return uart_named(plan, target, index, op, needs_rx=True)

SPEC = OpSpec(
    model=UartLineRead,
    family="uart",
    flags=frozenset({Flag.RX_RING, Flag.CONSOLE}),
    realizations={
        "zephyr": Realization(
            template="uart", view=_zephyr, available=console_uart_known, admits=zephyr_uart_mode("interrupt")
        ),
        "espidf": Realization(template="uart", view=_espidf),
        "hal": Realization(template="ops", view=_hal),
    },
    checks=(_instance, baud_error),
    codes=("E_NO_PERIPHERAL", "E_UNKNOWN_RESOURCE", "E_BAUD_ERROR"),
)
