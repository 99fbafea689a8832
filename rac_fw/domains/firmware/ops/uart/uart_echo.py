"""The ``uart_echo`` operation: echo the console UART by polling its receiver, no interrupt involved.

The polled counterpart of ``uart_rx_irq`` with ``echo``: each byte the receiver holds is read and sent back
from the main loop (Zephyr ``uart_poll_in``/``uart_poll_out``; bare metal: RXNE then the data register). At
start-up it listens for a first line for a bounded window and reports how many bytes it echoed; afterwards
it keeps echoing. Polling loses bytes that arrive faster than the loop drains a one-byte receiver, which is
why the interrupt-driven operation exists; this one needs no IRQ and works where a driver only polls
(native_sim's PTY UART).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import console_uart_known, has_registers
from rac_fw.domains.firmware.ops.uart import UART_DRAIN_MS
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder

#: How long start-up listens for a first line (ms), as ``uart_rx_irq``'s self-test does.
LISTEN_MS = 1000


class UartEcho(Operation):
    """Echo bytes arriving on the console UART by polling; report after a first line or ``listen_ms`` (ms).

    The report counts the bytes echoed while listening; echoing continues from the main loop.
    """

    op: Literal["uart_echo"]
    listen_ms: int = Field(default=LISTEN_MS, ge=10, le=60_000, description="Start-up listening window (ms).")


def _zephyr(b: ZephyrBuilder, index: int, op: UartEcho) -> dict[str, Any]:
    label, _ = b.console()
    b.app.includes.add("zephyr/drivers/uart.h")
    return {
        "node": label,
        "listen_ms": op.listen_ms,
        "setup": True,
        "step": {"period_ms": UART_DRAIN_MS},
    }


def _baremetal(b: BaremetalBuild, index: int, op: UartEcho) -> None:
    driver = b.uart_of(None, None)
    if driver["rx_pin"] is None or driver.get("rx") is None:
        raise b.error(f"{driver['inst']} has no polled receiver (RX pin and data register) the templates know")
    ctx = (
        b.base(index, op)
        | {key: driver[key] for key in ("inst", "putc", "init", "m", "layout", "status", "rx")}
        | {"listen_ms": op.listen_ms, "listen_budget": b.budget_us(4 * op.listen_ms * 1000)}
    )
    b.emit("ops/uart_echo", ctx)


def _polled_receiver(target: Target) -> bool:
    """Bare metal polls an STM32 USART (SR/DR or ISR/RDR); the nRF UARTE receives by EasyDMA only."""
    console = target.board.console
    return console is not None and any(has_registers(target, console.uart, r) for r in ("DR", "RDR"))


SPEC = OpSpec(
    model=UartEcho,
    family="uart",
    flags=frozenset({Flag.CONSOLE, Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="uart_echo", view=_zephyr, available=console_uart_known),
        "baremetal": Realization(template="ops/uart_echo", view=_baremetal, available=_polled_receiver),
    },
)
