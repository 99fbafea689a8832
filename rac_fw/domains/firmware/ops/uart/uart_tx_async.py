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
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import drop_operation, violation
from rac_fw.domains.firmware.plan.fields import Message
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.hal import HalBuild
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
    """Other operations that drive the console UART through the async callback or its interrupt-driven
    receive path (Zephyr builds one API mode per UART: ``UART_n_INTERRUPT_DRIVEN`` turns its async off)."""
    return [
        i
        for i, o in enumerate(plan.operations)
        if i != index and (o.op == "uart_tx_async" or spec(o.op).has(Flag.RX_RING))
    ]


def _check(plan: Plan, target: Target, framework: str, index: int, op: UartTxAsync) -> list[Evidence]:
    """E_UART_CALLBACK_SHARED: the async API has one event callback per UART, which this operation owns,
    and no interrupt-driven receiver may run on the same UART. Reported once per pair, at the later one."""

    if framework not in ("zephyr", "hal"):
        return []
    found: list[Evidence] = []
    label = op.name or f"operations[{index}]"
    for other_index in _owners(plan, index):
        other = plan.operations[other_index]
        if framework == "hal" and other.op != "uart_tx_async":
            continue  # HAL: reception has its own callbacks; only HAL_UART_TxCpltCallback is one per app
        if other.op == "uart_tx_async" and other_index < index:
            continue  # the earlier sender reports the pair
        later = max(index, other_index)
        name = other.name or f"operations[{other_index}]"
        options = [drop_operation(plan, later), drop_operation(plan, min(index, other_index))]
        found.append(
            violation(
                "E_UART_CALLBACK_SHARED",
                f"{label} and {name} ({other.op}) would both drive the console UART: the async API keeps one "
                "callback per UART (uart_callback_set) and is off where the UART is interrupt-driven",
                ["operations", later],
                [label, name],
                relaxations=options,
            )
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: UartTxAsync) -> dict[str, Any]:
    label, baud = b.console()
    b.app.includes.update({"zephyr/drivers/uart.h", "zephyr/sys/atomic.h"})
    for symbol in UART_ASYNC_KCONFIG[:1]:
        b.app.kconfig.setdefault(symbol, "uart")
    text = op.message + "\r\n"
    return {
        "node": label,
        "message": c_string(text),
        "length": len(text.encode()),
        # uart_tx's timeout is in microseconds (SYS_FOREVER_US for none).
        "timeout_us": op.timeout_ms * 1000,
        "wait_ms": op.timeout_ms + 10 + (len(text) * 10 * 1000) // max(baud, 1),
        "reactions": attached(b, index),
        "setup": True,
        "step": {"period_ms": None},
    }


def _hal(b: HalBuild, index: int, op: UartTxAsync) -> dict[str, Any]:
    """HAL_UART_Transmit_IT on the console UART; HAL_UART_TxCpltCallback (from HAL_UART_IRQHandler) flags it."""
    view = b.base_view(index, op)
    uart = b.uart(None, None, f"operations[{index}]")
    b.uart_irq(uart, None)
    text = op.message + "\r\n"
    view.update(uart=uart, message=c_string(text), length=len(text.encode()), timeout_ms=op.timeout_ms)
    return view


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
        "hal": Realization(template="uart_async", view=_hal, available=lambda t: t.board.console is not None),
    },
    checks=(_check,),
    codes=("E_UART_CALLBACK_SHARED",),
)
