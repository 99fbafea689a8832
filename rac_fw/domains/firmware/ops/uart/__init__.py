"""UART operations: polled print, interrupt-driven receive into a ring, line-based command read.

This package holds one op spec per module; shared field types live here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import uart_instance
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import achievable_bauds, uart_api_modes, uart_baud
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.model import Plan

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


def zephyr_uart_mode(mode: str) -> Callable[[Plan, Target, int, Any], list[Evidence]]:
    """An ``admits`` check: the Zephyr driver of the operation's UART supports the API ``mode`` the
    realization uses (interrupt-driven receive, async DMA receive), per the facts."""

    def admits(plan: Plan, target: Target, index: int, op: Any) -> list[Evidence]:
        console = target.board.console
        instance = getattr(op, "uart", None) or (console.uart if console else None)
        modes = uart_api_modes(target, "zephyr", str(instance)) if instance else None
        if modes is None or mode in modes:
            return []
        return [
            Evidence(
                code="E_TARGET_UNSUPPORTED",
                message=f"the Zephyr driver of {instance} on {target.board.name} supports "
                f"{', '.join(sorted(modes))} I/O only, not the {mode} API {op.op} is realized with",
                location=f"operations[{index}]",
                objects=[op.op, str(instance), mode],
                relaxations=[
                    Relaxation(
                        description=f"drop this {op.op}", patch=[{"op": "remove", "path": ["operations", index]}]
                    )
                ],
            )
        ]

    return admits


#: Largest tolerated baud error between two ends (each side may be off by up to half of ~4 %).
BAUD_LIMIT_PERCENT = 2.0


def baud_error(plan: Plan, target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_BAUD_ERROR: the UART must produce the requested rate within 2 %.

    The produced rate comes from the UART's clock under the chosen framework and its divider facts
    (integer/fractional divider and oversampling, or a table of discrete settings). The relaxation is the
    nearest standard rate the UART does produce within the limit.
    """
    console = target.board.console
    instance = uart_instance(target, op)
    baud = op.baud or (console.baud if console else 0)
    if instance is None or not baud:
        return []
    clocks = plan_clocks(plan, target, framework)  # a core_clock request re-divides the UART's bus clock
    result = uart_baud(clocks, instance, baud)
    if result is None or (result.actual and result.error_percent <= BAUD_LIMIT_PERCENT):
        return []
    path: Path = ["operations", index, "baud"]
    rates = sorted(achievable_bauds(clocks, instance, BAUD_LIMIT_PERCENT), key=lambda r: abs(r - baud))
    clock = f" from a {result.clock_hz} Hz clock" if result.clock_hz else ""
    produced = (
        f"produces {result.actual:.0f} baud ({result.error_percent:.2f} % off)"
        if result.actual
        else ("has no setting for it")
    )
    magnitudes = [
        measure("requested", baud, "baud"),
        measure("produced", result.actual, "baud"),
        measure("error", result.error_percent if result.actual else 100.0, "%"),
        measure("limit", BAUD_LIMIT_PERCENT, "%"),
    ]
    if result.clock_hz:
        magnitudes.append(measure("uart_clock", result.clock_hz, "Hz"))
    return [
        violation(
            "E_BAUD_ERROR",
            f"{instance} at {baud} baud {produced}{clock} under {framework}; the limit is {BAUD_LIMIT_PERCENT:g} %",
            path,
            [instance, str(baud)],
            magnitudes,
            [relax(f"use {rate} baud", replace(path, rate)) for rate in rates],
        )
    ]
