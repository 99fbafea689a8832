"""The ``dma_periph_rx`` operation: its model and its spec."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Relaxation
from rac_fw.domains.firmware.facts.query import (
    console_rx_dma,
    console_uart_known,
    request_instance,
    serving_controllers,
)
from rac_fw.domains.firmware.ops.uart import UART_ASYNC_KCONFIG, UART_DRAIN_MS, UART_RX_IDLE_CHARS, zephyr_uart_mode
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import FactName, IrqPriority, Name, SignalName
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


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


def _zephyr(b: ZephyrBuilder, index: int, op: DmaPeriphRx) -> dict[str, Any]:
    """Console UART reception by DMA through Zephyr's asynchronous UART API.

    The driver owns the DMA channel: it starts the transfer, reports received spans (UART_RX_RDY)
    and asks for the next buffer (UART_RX_BUF_REQUEST). The plan buffer is split into two halves
    handed out in turn (``circular``) or given once. Because the application never sees the DMA
    start, it cannot clean the cache before it; on a D-cached core the buffer is therefore
    ``__nocache`` (Zephyr 4.1's STM32 UART driver also rejects cacheable buffers with -EFAULT).
    """

    where = f"operations[{index}]"
    label, baud = b.console()
    console = b.target.board.console
    console_rx = f"{console.uart}_RX" if console is not None else ""
    to_console = [
        Relaxation(
            description=f"receive the console UART {console_rx}",
            patch=[{"op": "replace", "path": ["operations", index, "peripheral"], "value": console_rx}],
        )
    ]
    if op.peripheral != console_rx:
        instance = request_instance(op.peripheral)
        if not op.peripheral.endswith("_RX") or "ADC" in instance:
            why = (
                "a Zephyr ADC driver owns any DMA it uses for a read sequence, so the application "
                "cannot start an ADC transfer into a plan buffer; sample with adc_scan"
                if "ADC" in instance
                else "the Zephyr lowering receives by DMA from the console UART's RX request only"
            )
            relax = [
                Relaxation(
                    description=f"remove operations[{index}]",
                    patch=[{"op": "remove", "path": ["operations", index]}],
                )
            ]
            raise b.unsupported(f"{where}.peripheral", f"{op.peripheral}: {why}", [op.peripheral], relax)
        raise b.unsupported(
            f"{where}.peripheral",
            f"the Zephyr lowering drives the console UART ({console_rx}); {op.peripheral} needs pin "
            "control it does not generate",
            [op.peripheral],
            to_console if console_rx else [],
        )
    route = b.console_rx_route()
    if route is None:
        raise b.unsupported(
            where,
            f"no DMA route for {console_rx} is known from the {b.target.id} facts "
            "(a DmaController.requests mapping or extra.dmamux request lines)",
            [console_rx],
            [],
        )
    if op.controller is not None and op.controller.upper() != route.controller.upper():
        raise b.unsupported(
            f"{where}.controller",
            f"{console_rx} is routed to {route.controller} in this lowering, not {op.controller}",
            [op.controller, route.controller],
            [
                Relaxation(
                    description=f"use {route.controller}",
                    patch=[{"op": "remove", "path": ["operations", index, "controller"]}],
                )
            ],
        )
    b.claim_rx(index, label)
    if route.dmas is not None:
        b.app.dma(label, "rx", route.dmas)
        for node in route.nodes:
            b.app.okay(node)
        b.app.kconfig.setdefault("CONFIG_DMA", "uart")
    pieces = 2 if op.circular else 1
    buffer = b.dma_buffer(op.buffer, f"{where}.buffer", nocache=True, pieces=pieces)
    b.app.includes.update({"zephyr/drivers/uart.h", "zephyr/sys/ring_buffer.h", "zephyr/sys/atomic.h"})
    for symbol in UART_ASYNC_KCONFIG:
        b.app.kconfig.setdefault(symbol, "uart")
    handoffs = b.handoffs(index)
    return {
        "node": label,
        "request": route.request,
        "controller": route.controller,
        "buffer": buffer,
        "circular": op.circular,
        "piece": buffer["size"] // pieces,
        # Report a span after this many microseconds of line silence (async API timeouts are in us).
        "timeout_us": -(-UART_RX_IDLE_CHARS * 10 * 1_000_000 // baud),
        "ring_bytes": buffer["size"],
        "handoffs": handoffs,
        "setup": True,
        "step": {"period_ms": UART_DRAIN_MS},
    }


def _hal(b: HalBuild, index: int, op: DmaPeriphRx) -> dict[str, Any]:
    where = f"operations[{index}]"
    view = b.base_view(index, op)
    if not re.match(r"^U(S)?ART\d+_RX$", op.peripheral):
        raise b.unsupported(f"{where}.peripheral", "the HAL lowering receives by DMA from U(S)ARTn_RX only; "
                            "sample ADCs with adc_scan")  # fmt: skip
    uart = b.uart(op.peripheral[:-3], None, where)
    if uart.get("rx_sym"):
        raise b.unsupported(where, f"{uart['instance']} already receives for {uart['rx_sym']}")
    uart["rx_sym"] = view["sym"]
    view["uart"] = uart
    view["buffer"] = b.buffer(op.buffer, f"{where}.buffer")
    view["dma"] = b.dma_stream(op.peripheral, op.controller, where)
    view["dma"].update(owner=view, priority=5 if op.irq_priority is None else op.irq_priority)
    uart["rx_dma"] = view
    b.uart_irq(uart, op.irq_priority)
    return view


def _radio(plan: Plan, target: Target, framework: str, index: int, op: DmaPeriphRx) -> list[Evidence]:
    """An ADC request on the unit the Wi-Fi radio holds is the radio concern's ``E_RADIO_CONFLICT``
    (imported when it runs: the obligations package imports the plan model, which collects this spec)."""
    from rac_fw.domains.firmware.obligations.radio import sampled_unit

    return sampled_unit(plan, target, ["operations", index, "peripheral"], op.peripheral)

def _names(plan: Plan, target: Target, framework: str, index: int, op: DmaPeriphRx) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: the ``dma_rx`` buffer, and a named controller must serve the request."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    refs.buffer(op.buffer, [*base, "buffer"], ("dma_rx",))
    serving = [c.name for c in serving_controllers(target, op.peripheral)]
    refs.op_controller(op.controller, [*base, "controller"], serving)
    return refs.found

def _request(plan: Plan, target: Target, framework: str, index: int, op: DmaPeriphRx) -> list[Evidence]:
    """The request's peripheral must exist and a DMA controller serve it (the peripherals concern's rule)."""
    from rac_fw.domains.firmware.obligations.peripherals import request_named  # runs after the plan model exists

    return request_named(target, index, op)

SPEC = OpSpec(
    model=DmaPeriphRx,
    family="dma",
    needs="dma",
    flags=frozenset({Flag.ISR_CONTEXT, Flag.RX_RING}),
    realizations={
        "zephyr": Realization(
            template="uart",
            view=_zephyr,
            admits=zephyr_uart_mode("async"),
            available=lambda t: console_uart_known(t) and console_rx_dma(t) is not None,
        ),
        "hal": Realization(template="ops", view=_hal),
    },
    checks=(_request, _names, _radio),
    codes=("E_NO_PERIPHERAL", "E_TARGET_UNSUPPORTED", "E_UNKNOWN_RESOURCE", "E_RADIO_CONFLICT"),
)
