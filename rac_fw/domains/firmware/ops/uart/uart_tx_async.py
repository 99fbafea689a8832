"""The ``uart_tx_async`` operation: send a message with the asynchronous UART API and publish its completion.

Zephyr's async API (include/zephyr/drivers/uart.h) hands the whole buffer to the driver with ``uart_tx`` and
reports ``UART_TX_DONE`` (or ``UART_TX_ABORTED`` after ``uart_tx_abort`` or the driver's timeout) to the
callback registered with ``uart_callback_set``, in the UART's interrupt. The thread never polls a byte.
Realized where the console UART's DMA is built into the peripheral (nRF UARTE EasyDMA); a UART whose driver
needs a devicetree ``dmas`` channel pair for TX is not offered, and a driver without the async API (the
native_sim PTY UART) is refused by the facts' API modes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import console_rx_dma, console_uart_known
from rac_fw.domains.firmware.ops.events import attached
from rac_fw.domains.firmware.ops.uart import UART_ASYNC_KCONFIG, zephyr_uart_mode
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.evidence import relax, remove, violation
from rac_fw.domains.firmware.plan.fields import Message
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class UartTxAsync(Operation):
    """Send ``message`` (plus CR LF) on the console UART with the async API; publish ``done`` on completion.

    ``timeout_ms`` (ms) bounds the transfer: the driver aborts it (UART_TX_ABORTED) and the step fails
    with -ETIMEDOUT. ``done`` is raised in the UART interrupt when the driver reports UART_TX_DONE; the
    operation's value is the number of bytes the driver reported sent.
    """

    op: Literal["uart_tx_async"]
    message: Message
    timeout_ms: int = Field(default=100, ge=1, le=60_000, description="Bound on the transfer (ms).")


def _owners(plan: Plan, index: int) -> list[int]:
    """Other operations that register the console UART's async callback (one callback per UART)."""
    return [i for i, o in enumerate(plan.operations) if i != index and o.op in {"uart_tx_async", "dma_periph_rx"}]


def _check(plan: Plan, target: Target, framework: str, index: int, op: UartTxAsync) -> list[Evidence]:
    """E_UART_CALLBACK_SHARED: the async API has one event callback per UART, which this operation owns."""

    others = _owners(plan, index) if framework == "zephyr" else []
    if not others or others[0] < index:
        return []
    label = op.name or f"operations[{index}]"
    other = plan.operations[others[0]]
    name = other.name or f"operations[{others[0]}]"
    return [
        violation(
            "E_UART_CALLBACK_SHARED",
            f"{label} and {name} ({other.op}) would both register the console UART's async callback "
            "(uart_callback_set keeps one per UART)",
            ["operations", others[0]],
            [label, name],
            relaxations=[relax(f"drop {name}", remove(["operations", others[0]]))],
        )
    ]


def _zephyr(b: ZephyrBuilder, index: int, op: UartTxAsync) -> dict[str, Any]:
    label, baud = b.console()
    b.app.includes.update({"zephyr/drivers/uart.h", "zephyr/sys/atomic.h"})
    for symbol in UART_ASYNC_KCONFIG[:1]:
        b.app.kconfig.setdefault(symbol, "uart")
    text = op.message + "\r\n"
    return {
        "node": label,
        "message": c_string_literal(text),
        "length": len(text.encode()),
        # uart_tx's timeout is in microseconds (SYS_FOREVER_US for none).
        "timeout_us": op.timeout_ms * 1000,
        "wait_ms": op.timeout_ms + 10 + (len(text) * 10 * 1000) // max(baud, 1),
        "reactions": attached(b, index),
        "setup": True,
        "step": {"period_ms": None},
    }


def _available(target: Target) -> bool:
    route = console_rx_dma(target)
    return console_uart_known(target) and route is not None and route.builtin


SPEC = OpSpec(
    model=UartTxAsync,
    family="uart",
    flags=frozenset({Flag.ISR_CONTEXT, Flag.CONSOLE, Flag.VALUE}),
    events=("done",),
    realizations={
        "zephyr": Realization(
            template="uart_async", view=_zephyr, admits=zephyr_uart_mode("async"), available=_available
        ),
    },
    checks=(_check,),
    codes=("E_UART_CALLBACK_SHARED",),
)
