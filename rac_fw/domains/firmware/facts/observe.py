"""The observation an agent gets about a target: a compact summary plus depth on demand.

``summary`` must stay small (≤ ~8 KB of JSON) because it goes into every agent turn: instance lists are
compressed to ranges (``USART1-3,6``), free pins to per-port ranges, and per-object depth is left to
``detail`` (``peripheral USART2``, ``pin PA9``, ``region DTCM``, ``dma DMA1``, ``clock APB1``,
``extra uart``: a typed chip fact). Every answer is derived from the loaded facts; nothing is computed twice elsewhere.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, is_dataclass
from typing import Any

from rac_fw.domains.firmware.facts.load import FACT_FIELDS
from rac_fw.domains.firmware.facts.load import peripheral as load_peripheral
from rac_fw.domains.firmware.facts.model import ClockDomain, DmaController, MemoryRegion, Pin, Target
from rac_fw.domains.firmware.facts.query import instance_clock, pin_free

DETAIL_KINDS = ("peripheral", "pin", "region", "dma", "clock", "extra")
_NAME_NUMBER = re.compile(r"^(.*?)(\d+)$")
#: Target fields the summary shows in its own sections; the rest are ``chip_facts``.
_CORE_KEYS = frozenset({"id", "name", "vendor", "family", "core", "memory", "bus_masters", "dma", "clocks", "pins"})


class UnknownName(LookupError):
    """``detail`` was asked about a name the target does not have; carries near matches."""

    def __init__(self, target_id: str, what: str, name: str, known: Iterable[str]):
        self.target_id, self.what, self.name = target_id, what, name
        known_list = sorted(known)
        self.near = difflib.get_close_matches(name.upper(), [k.upper() for k in known_list], n=6, cutoff=0.5)
        self.near = [k for k in known_list if k.upper() in self.near]
        hint = f"; near matches: {', '.join(self.near)}" if self.near else ""
        super().__init__(f"{target_id} has no {what} {name!r}{hint}")


class UnknownDetailKind(ValueError):
    """``detail`` was asked for a kind of object it does not describe."""

    def __init__(self, what: str):
        self.what = what
        super().__init__(f"unknown detail kind {what!r}; use one of: {', '.join(DETAIL_KINDS)}")


def _hex(value: int) -> str:
    return f"0x{value:08X}"


def compress_names(names: Iterable[str]) -> str:
    """``["USART1", "USART2", "USART3", "USART6"]`` → ``"USART1-3,6"``; groups are space-separated."""
    numbered: dict[str, list[int]] = defaultdict(list)
    plain: list[str] = []
    for name in names:
        match = _NAME_NUMBER.match(name)
        if match:
            numbered[match.group(1)].append(int(match.group(2)))
        else:
            plain.append(name)
    parts = sorted(plain)
    for prefix in sorted(numbered):
        parts.append(prefix + _ranges(sorted(set(numbered[prefix]))))
    return " ".join(parts)


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 6]`` → ``"1-3,6"`` (input sorted, unique)."""
    spans: list[str] = []
    start = prev = numbers[0]
    for number in numbers[1:]:
        if number == prev + 1:
            prev = number
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = number
    spans.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(spans)


def _port_of(pin: str) -> tuple[str, int] | None:
    """Split ``PA9`` → (``PA``, 9), ``P0.13`` → (``P0.``, 13), ``GPIO4`` → (``GPIO``, 4)."""
    match = re.match(r"^(P[A-K]|P\d\.|GPIO)(\d+)$", pin)
    return (match.group(1), int(match.group(2))) if match else None


def _compress_pins(pins: Iterable[str]) -> dict[str, str]:
    """Per-port ranges (``{"PA": "0,3-6"}``); pins outside the port scheme (``PC2_C``) under ``other``."""
    by_port: dict[str, list[int]] = defaultdict(list)
    other: list[str] = []
    for pin in pins:
        split = _port_of(pin)
        if split:
            by_port[split[0]].append(split[1])
        else:
            other.append(pin)
    compact = {port: _ranges(sorted(numbers)) for port, numbers in sorted(by_port.items())}
    if other:
        compact["other"] = " ".join(sorted(other))
    return compact


def board_usage(target: Target) -> dict[str, str]:
    """Pin → what the board uses it for (LEDs, buttons, console, board wiring)."""
    board = target.board
    used: dict[str, str] = dict(board.reserved_pins)
    for led in board.leds:
        used[led.pin] = f"LED {led.name}" + (f" ({led.dt_label})" if led.dt_label else "")
    for button in board.buttons:
        used[button.pin] = f"button {button.name}" + (f" ({button.dt_label})" if button.dt_label else "")
    if board.console:
        used.setdefault(board.console.tx, f"console {board.console.uart} TX")
        used.setdefault(board.console.rx, f"console {board.console.uart} RX")
    return used


def free_pins(target: Target) -> list[str]:
    """Pins a plan may take (``facts.query.pin_free``) that the board's console does not use either."""
    used = board_usage(target)
    return [name for name in target.pins if pin_free(target, name) and name not in used]


def _masters_of(region: MemoryRegion) -> list[str]:
    return [m for m in region.reachable_by if m != "cpu"]


def summary(target: Target) -> dict[str, Any]:
    """The compact typed observation of a target (memory/DMA/cache, peripherals, pins, board, clocks)."""
    dcache = target.core.dcache
    groups: dict[str, list[str]] = defaultdict(list)
    for peripheral in target.peripherals.values():
        groups[peripheral.group].append(peripheral.name)
    pins_reserved = {name: pin.reserved for name, pin in target.pins.items() if pin.reserved}
    dma_masters = [m.name for m in target.bus_masters if m.name != "cpu"]
    board = target.board
    return {
        "target": target.id,
        "name": target.name,
        "vendor": target.vendor,
        "family": target.family,
        "frameworks": list(target.frameworks),
        "core": {
            "name": target.core.name,
            "fpu": target.core.fpu,
            "mpu": target.core.mpu,
            "dcache": {"size": dcache.size, "line_bytes": dcache.line_bytes} if dcache else None,
            "nvic_priority_bits": target.core.nvic_priority_bits,
        },
        "memory": [
            {
                "name": r.name,
                "kind": r.kind,
                "address": _hex(r.address),
                "size": r.size,
                "cacheable": r.cacheable,
                "executable": r.executable,
                "dma": _masters_of(r),
                **({"no_dma": blocked} if (blocked := [m for m in dma_masters if m not in r.reachable_by]) else {}),
            }
            for r in target.memory
        ],
        "dma": [
            {
                "name": d.name,
                "m2m": d.memory_to_memory,
                "channels": d.channels,
                "max_items": d.max_transfer_items,
                "reaches": [r.name for r in target.regions_reachable_by(d.master)],
                **({"serves": compress_names(d.peripherals)} if d.peripherals else {}),
            }
            for d in target.dma
        ],
        "peripherals": {group: compress_names(names) for group, names in sorted(groups.items())},
        "irq_count": target.irq_count,
        "pins": {
            "routing": sorted({p.routing for p in target.pins.values()}),
            "count": len(target.pins),
            "free": _compress_pins(free_pins(target)),
            "reserved": pins_reserved,
            "strapping": [n for n, p in target.pins.items() if p.strapping],
            "analog": compress_names(a for p in target.pins.values() for a in p.analog[:1])
            if len(target.pins) < 60
            else sum(1 for p in target.pins.values() if p.analog),
        },
        "board": {
            "name": board.name,
            "zephyr_board": board.zephyr_board,
            "idf_target": board.idf_target,
            "hal_family": board.hal_family,
            "leds": [
                f"{led.dt_label or led.name}={led.pin}{' (active low)' if led.active_low else ''}" for led in board.leds
            ],
            "buttons": [
                f"{b.dt_label or b.name}={b.pin}{' (active low)' if b.active_low else ''}" for b in board.buttons
            ],
            "console": (
                f"{board.console.uart} tx={board.console.tx} rx={board.console.rx} {board.console.baud} baud"
                if board.console
                else None
            ),
            "board_pins": board_usage(target),
            "dt_aliases": board.dt_aliases,
            "dt_chosen": board.dt_chosen,
            "dt_node_labels": list(board.dt_node_labels),
        },
        "clocks": {c.name: {"max": c.max_hz, **c.default_hz} for c in target.clocks},
        "extra": sorted(chip_facts(target)),
        "detail": "ask detail(what, name) with what in " + "/".join(DETAIL_KINDS),
    }


def _find(target: Target, what: str, name: str, names: Iterable[str]) -> str:
    known = list(names)
    if name in known:
        return name
    folded = {k.upper(): k for k in known}
    if name.upper() in folded:
        return folded[name.upper()]
    raise UnknownName(target.id, what, name, known)


def _peripheral_detail(target: Target, name: str) -> dict[str, Any]:
    key = _find(target, "peripheral", name, target.peripherals)
    found = load_peripheral(target.id, key)
    signals: dict[str, list[dict[str, Any]]] = defaultdict(list)
    prefix = f"{found.name}_"
    for pin in target.pins.values():
        for function in pin.functions:
            if function.signal.startswith(prefix):
                signals[function.signal].append({"pin": pin.name, "af": function.af})
        for analog in pin.analog:
            if analog.startswith(prefix):
                signals[analog].append({"pin": pin.name, "analog": True})
    routing = {p.routing for p in target.pins.values()}
    bus = instance_clock(target, found.name)
    return {
        "name": found.name,
        "group": found.group,
        "base": _hex(found.base),
        "derived_from": found.derived_from,
        "interrupts": [{"name": i.name, "irqn": i.number} for i in found.interrupts],
        "clock": bus,
        "dma": [d.name for d in target.dma if not d.peripherals or found.name in d.peripherals],
        "signals": dict(sorted(signals.items())),
        "routing": (
            "any pin through PSEL/GPIO matrix"
            if routing & {"psel", "matrix"}
            else "alternate-function pins listed in signals"
        ),
        "registers": [
            {
                "name": r.name,
                "offset": r.offset,
                "size": r.size_bits,
                "reset": r.reset,
                "access": r.access,
                "fields": {f.name: [f.lsb, f.width] for f in r.fields},
            }
            for r in found.registers
        ],
    }


def chip_facts(target: Target) -> dict[str, Any]:
    """The chip facts beyond memory, DMA, clocks and pins that this target states (``adc``, ``uart``,
    ``timers``, ``flash``, ``radio``…), as plain data: what ``detail extra NAME`` shows."""
    found: dict[str, Any] = {}
    for name in sorted(FACT_FIELDS - _CORE_KEYS):
        value = getattr(target, name)
        if value not in (None, {}, ()):
            found[name] = asdict(value) if is_dataclass(value) and not isinstance(value, type) else _plain(value)
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value


def _pin_detail(target: Target, name: str) -> dict[str, Any]:
    key = _find(target, "pin", name, target.pins)
    pin: Pin = target.pins[key]
    usage = board_usage(target).get(key)
    signals = [*pin.analog, *(f.signal for f in pin.functions)]
    pinctrl = {s: label for s in signals if (label := target.pinctrl_label(key, s)) is not None}
    return {
        "name": pin.name,
        "routing": pin.routing,
        "functions": [{"signal": f.signal, "af": f.af} for f in pin.functions],
        "analog": list(pin.analog),
        "board_default_adc": target.board.adc_default_pin == key,
        "pinctrl_labels": pinctrl,
        "reserved": pin.reserved,
        "strapping": pin.strapping,
        "requires": list(pin.requires),
        "board_use": usage,
        "free": pin_free(target, key) and usage is None,
        "notes": pin.notes,
    }


def _region_detail(target: Target, name: str) -> dict[str, Any]:
    key = _find(target, "region", name, [r.name for r in target.memory])
    region = target.region(key)
    assert region is not None
    masters = [m.name for m in target.bus_masters]
    dcache = target.core.dcache
    return {
        "name": region.name,
        "kind": region.kind,
        "address": _hex(region.address),
        "end": _hex(region.end),
        "size": region.size,
        "cacheable": region.cacheable,
        "cache_line_bytes": dcache.line_bytes if (dcache and region.cacheable) else None,
        "executable": region.executable,
        "reachable_by": list(region.reachable_by),
        "unreachable_by": [m for m in masters if m not in region.reachable_by],
        "dma_capable": region.dma_capable,
        "dt_label": region.dt_label,
        "notes": region.notes,
    }


def _dma_detail(target: Target, name: str) -> dict[str, Any]:
    key = _find(target, "dma", name, [d.name for d in target.dma])
    controller: DmaController | None = target.dma_controller(key)
    assert controller is not None
    reachable = target.regions_reachable_by(controller.master)
    return {
        "name": controller.name,
        "master": controller.master,
        "memory_to_memory": controller.memory_to_memory,
        "max_transfer_items": controller.max_transfer_items,
        "alignment_bytes": controller.alignment_bytes,
        "channels": controller.channels,
        "serves": list(controller.peripherals) or "any request",
        "reachable_regions": [r.name for r in reachable],
        "unreachable_regions": [r.name for r in target.memory if r not in reachable],
        "notes": controller.notes,
    }


def _clock_detail(target: Target, name: str) -> dict[str, Any]:
    key = _find(target, "clock", name, [c.name for c in target.clocks])
    clock: ClockDomain | None = target.clock(key)
    assert clock is not None
    return {
        "name": clock.name,
        "max_hz": clock.max_hz,
        "default_hz": dict(clock.default_hz),
        "parent": clock.parent,
        "children": [c.name for c in target.clocks if c.parent == clock.name],
        "notes": clock.notes,
    }


def _extra_detail(target: Target, name: str) -> dict[str, Any]:
    facts = chip_facts(target)
    key = _find(target, "extra", name, facts)
    return {"name": key, "value": facts[key]}


_DETAILS: dict[str, Callable[[Target, str], dict[str, Any]]] = {
    "peripheral": _peripheral_detail,
    "pin": _pin_detail,
    "region": _region_detail,
    "dma": _dma_detail,
    "clock": _clock_detail,
    "extra": _extra_detail,
}


def detail(target: Target, what: str, name: str) -> dict[str, Any]:
    """Depth on one named object; raises ``UnknownDetailKind`` or ``UnknownName`` (with near matches)."""
    handler = _DETAILS.get(what.lower())
    if handler is None:
        raise UnknownDetailKind(what)
    return {"target": target.id, "detail": what.lower(), **handler(target, name)}
