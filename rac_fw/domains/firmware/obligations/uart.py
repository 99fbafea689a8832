"""E_BAUD_ERROR: the UART must produce the requested rate within 2 %.

The produced rate comes from the UART's clock under the chosen framework and its divider facts
(integer/fractional divider and oversampling, or a table of discrete settings). The relaxation is the
nearest standard rate the UART does produce within the limit.
"""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.claims import uart_instance
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import achievable_bauds, uart_baud
from rac_fw.domains.firmware.ops.uart.uart_line_read import UartLineRead
from rac_fw.domains.firmware.ops.uart.uart_print import UartPrint
from rac_fw.domains.firmware.ops.uart.uart_rx_irq import UartRxIrq
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan

#: Largest tolerated baud error between two ends (each side may be off by up to half of ~4 %).
BAUD_LIMIT_PERCENT = 2.0


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Every UART operation's rate against its instance's divider."""
    found: list[Evidence] = []
    console = target.board.console
    for i, op in enumerate(plan.operations):
        if not isinstance(op, UartPrint | UartRxIrq | UartLineRead):
            continue
        instance = uart_instance(target, op)
        baud = op.baud or (console.baud if console else 0)
        if instance is None or not baud:
            continue
        result = uart_baud(target, instance, baud, framework)
        if result is None or (result.actual and result.error_percent <= BAUD_LIMIT_PERCENT):
            continue
        path: Path = ["operations", i, "baud"]
        rates = sorted(achievable_bauds(target, instance, framework, BAUD_LIMIT_PERCENT), key=lambda r: abs(r - baud))
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
        found.append(
            violation(
                "E_BAUD_ERROR",
                f"{instance} at {baud} baud {produced}{clock} under {framework}; the limit is {BAUD_LIMIT_PERCENT:g} %",
                path,
                [instance, str(baud)],
                magnitudes,
                [relax(f"use {rate} baud", replace(path, rate)) for rate in rates],
            )
        )
    return found
