"""E_NO_PERIPHERAL: every peripheral instance a plan names exists on this chip (UART, bus controller,
hardware timer, DMA request source), and a non-console UART has its pins declared.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import claims, is_console
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import (
    adc_units,
    free_pins,
    normalized,
    request_instance,
    serving_controllers,
    timer_names,
    uart_instances,
)
from rac_fw.domains.firmware.obligations.refs import describe_pin
from rac_fw.domains.firmware.ops.dma.dma_periph_rx import DmaPeriphRx
from rac_fw.domains.firmware.ops.timer.timer_oneshot import TimerOneshot
from rac_fw.domains.firmware.ops.timer.timer_periodic import TimerPeriodic
from rac_fw.domains.firmware.ops.uart.uart_line_read import UartLineRead
from rac_fw.domains.firmware.ops.uart.uart_print import UartPrint
from rac_fw.domains.firmware.ops.uart.uart_rx_irq import UartRxIrq
from rac_fw.domains.firmware.plan.evidence import Path, add, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.model import Plan

CODE = "E_NO_PERIPHERAL"


def has_peripheral(target: Target, name: str) -> bool:
    """The chip has instance ``name``: in its SVD, its fact tables, or (emulated) its devicetree labels."""
    if name in target.peripherals:
        return True
    if name in uart_instances(target) or name in target.timers or name in adc_units(target):
        return True
    return normalized(name) in {normalized(label) for label in target.board.dt_node_labels}


def _family(name: str) -> str:
    return re.sub(r"\d+$", "", name)


def instances_like(target: Target, name: str, families: tuple[str, ...] = ()) -> list[str]:
    """Existing instances of the same kind as ``name`` (``USART7`` → ``USART1``, ``USART2``…)."""
    wanted = set(families) or {_family(name)}
    pool = set(target.peripherals) | uart_instances(target) | set(target.timers)
    pool |= {label.upper() for label in target.board.dt_node_labels}
    same = sorted((p for p in pool if _family(p) in wanted), key=lambda p: (len(p), p))
    close = difflib.get_close_matches(name, same, n=3, cutoff=0.5)
    return list(dict.fromkeys(close + same))


def _missing(target: Target, name: str, path: Path, objects: list[str], options: list[Relaxation]) -> Evidence:
    return violation(CODE, f"{target.id} has no peripheral {name}", path, objects, relaxations=options)


def _missing_signals(plan: Plan, instance: str, needs_rx: bool) -> list[str]:
    declared = {p.function for p in plan.resources.pins}
    return [f"{instance}_{s}" for s in (("TX", "RX") if needs_rx else ("TX",)) if f"{instance}_{s}" not in declared]


def _declare_pins(plan: Plan, target: Target, signals: list[str]) -> tuple[list[dict[str, Any]], list[str]] | None:
    """Patch steps declaring a free pin for each of ``signals`` (and how to describe them), or None."""
    taken = {c.pin for c in claims(plan, target)}
    steps, chosen = [], []
    for signal in signals:
        pins = free_pins(target, taken, signal)
        if not pins:
            return None
        taken.add(pins[0].name)
        chosen.append(describe_pin(pins[0], signal))
        steps.append(add(["resources", "pins", -1], {"name": signal.lower(), "pin": pins[0].name, "function": signal}))
    return steps, chosen


def _uart_instead(plan: Plan, target: Target, name: str, path: Path, needs_rx: bool) -> Relaxation | None:
    """Use UART ``name`` instead, declaring the pins it needs when it is not the console."""
    if is_console(target, name):
        return relax(f"use {name}", replace(path, name))
    declared = _declare_pins(plan, target, _missing_signals(plan, name, needs_rx))
    if declared is None:
        return None
    steps, chosen = declared
    return relax(f"use {name}" + (f" on {', '.join(chosen)}" if chosen else ""), replace(path, name), *steps)


def _uart_pins(plan: Plan, target: Target, instance: str, path: Path, needs_rx: bool) -> list[Evidence]:
    """A non-console UART needs its TX (and, to receive, RX) pin declared with that function."""
    missing = _missing_signals(plan, instance, needs_rx)
    if not missing:
        return []
    declared = _declare_pins(plan, target, missing)
    options = [relax(f"declare {', '.join(declared[1])}", *declared[0])] if declared else []
    options.append(relax("use the board console UART instead", remove(path)))
    return [
        violation(
            "E_UNKNOWN_RESOURCE",
            f"{instance} needs pins declared in resources.pins with function {' and '.join(missing)}",
            path,
            [instance, *missing],
            relaxations=options,
        )
    ]


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Instances named by UART ops, devices, timers and DMA requests exist; UART pins are declared."""
    found: list[Evidence] = []
    for i, device in enumerate(plan.resources.devices):
        path: Path = ["resources", "devices", i, "controller"]
        if not has_peripheral(target, device.controller):
            families = ("I2C", "TWIM", "TWI") if device.bus == "i2c" else ("SPI", "SPIM")
            options = [
                relax(f"use {n}", replace(path, n)) for n in instances_like(target, device.controller, families)[:3]
            ]
            found.append(_missing(target, device.controller, path, [device.name, device.controller], options))
    for i, op in enumerate(plan.operations):
        base: Path = ["operations", i]
        if isinstance(op, UartPrint | UartRxIrq | UartLineRead) and op.uart is not None:
            path = [*base, "uart"]
            if not has_peripheral(target, op.uart):
                needs_rx = not isinstance(op, UartPrint)
                options = [relax("use the board console UART", remove(path))]
                options += [
                    option
                    for n in instances_like(target, op.uart)
                    if (option := _uart_instead(plan, target, n, path, needs_rx)) is not None
                ]
                found.append(_missing(target, op.uart, path, [op.uart], options))
            elif not is_console(target, op.uart):
                found += _uart_pins(plan, target, op.uart, path, needs_rx=not isinstance(op, UartPrint))
        elif isinstance(op, TimerPeriodic | TimerOneshot) and op.source not in ("kernel", "systick"):
            path = [*base, "source"]
            if op.source not in target.timers:
                options = [relax(f"use hardware timer {n}", replace(path, n)) for n in timer_names(target)[:3]]
                found.append(_missing(target, op.source, path, [op.source], options))
        elif isinstance(op, DmaPeriphRx):
            path = [*base, "peripheral"]
            instance = request_instance(op.peripheral)
            if not has_peripheral(target, instance):
                options = [relax(f"use {n}", replace(path, n)) for n in instances_like(target, instance)[:3]]
                found.append(_missing(target, instance, path, [op.peripheral], options))
            elif target.dma and not serving_controllers(target, op.peripheral):
                found.append(
                    violation(
                        "E_TARGET_UNSUPPORTED",
                        f"no DMA controller of {target.id} serves {instance} requests",
                        path,
                        [op.peripheral],
                        relaxations=[relax("drop this transfer", remove(base))],
                    )
                )
    return found
