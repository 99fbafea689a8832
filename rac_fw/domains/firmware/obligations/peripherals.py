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
    """The controllers the plan's devices name exist. Operations naming an instance (a UART, a hardware timer,
    a DMA request) ask :func:`uart_named`, :func:`timer_named` and :func:`request_named` from their specs."""
    found: list[Evidence] = []
    for i, device in enumerate(plan.resources.devices):
        path: Path = ["resources", "devices", i, "controller"]
        if not has_peripheral(target, device.controller):
            families = ("I2C", "TWIM", "TWI") if device.bus == "i2c" else ("SPI", "SPIM")
            options = [
                relax(f"use {n}", replace(path, n)) for n in instances_like(target, device.controller, families)[:3]
            ]
            found.append(_missing(target, device.controller, path, [device.name, device.controller], options))
    return found


def uart_named(plan: Plan, target: Target, index: int, op: Any, needs_rx: bool) -> list[Evidence]:
    """A UART operation's ``uart`` must be an instance of the chip (E_NO_PERIPHERAL, relaxed to the console
    or a sibling whose pins can be declared) and, unless it is the console, have its pins declared
    (E_UNKNOWN_RESOURCE); ``needs_rx``: the operation receives, so the RX pin is needed too."""
    if op.uart is None:
        return []
    path: Path = ["operations", index, "uart"]
    if not has_peripheral(target, op.uart):
        options = [relax("use the board console UART", remove(path))]
        options += [
            option
            for n in instances_like(target, op.uart)
            if (option := _uart_instead(plan, target, n, path, needs_rx)) is not None
        ]
        return [_missing(target, op.uart, path, [op.uart], options)]
    if not is_console(target, op.uart):
        return _uart_pins(plan, target, op.uart, path, needs_rx=needs_rx)
    return []


def timer_named(target: Target, index: int, op: Any) -> list[Evidence]:
    """A timer operation's hardware ``source`` must be a timer of the chip (``kernel``/``systick`` always are)."""
    if op.source in ("kernel", "systick") or op.source in target.timers:
        return []
    path: Path = ["operations", index, "source"]
    options = [relax(f"use hardware timer {n}", replace(path, n)) for n in timer_names(target)[:3]]
    return [_missing(target, op.source, path, [op.source], options)]


def request_named(target: Target, index: int, op: Any) -> list[Evidence]:
    """A DMA request's ``peripheral`` must be an instance of the chip that a DMA controller serves."""
    base: Path = ["operations", index]
    path: Path = [*base, "peripheral"]
    instance = request_instance(op.peripheral)
    if not has_peripheral(target, instance):
        options = [relax(f"use {n}", replace(path, n)) for n in instances_like(target, instance)[:3]]
        return [_missing(target, instance, path, [op.peripheral], options)]
    if target.dma and not serving_controllers(target, op.peripheral):
        return [
            violation(
                "E_TARGET_UNSUPPORTED",
                f"no DMA controller of {target.id} serves {instance} requests",
                path,
                [op.peripheral],
                relaxations=[relax("drop this transfer", remove(base))],
            )
        ]
    return []
