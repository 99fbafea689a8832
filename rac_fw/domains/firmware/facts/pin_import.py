"""Derive a chip's ``pins.json`` (and a board's ``board_pins.json``) from ST's open pin data (CubeMX XML).

Three inputs, all from github STMicroelectronics/STM32_open_pin_data:

- the MCU file (``mcu/STM32F407VGTx.xml``): which signals each package pin can carry;
- the GPIO IP modes file (``mcu/IP/GPIO-…_Modes.xml``): the alternate-function number of each
  (pin, signal) pair (``GPIO_AF7_USART1`` → 7);
- optionally a board ``.ioc`` (CubeMX board configuration): what the board wires to each pin, used to
  reserve the crystal pins the board uses and to record board wiring; this goes to the *board* pack
  (``targets/boards/<id>/board_pins.json``), the rest to the chip pack (``targets/chips/<chip>/pins.json``).

Rules applied here (and only here): a signal with an AF number is a digital function; an ADC input,
DAC output, comparator or op-amp signal is analog; signals with neither (``RCC_OSC_IN``,
``USB_OTG_FS_VBUS``) are additional functions (AF None); ``*_EXTI*`` signals are dropped (any GPIO can
drive an EXTI line). SWD pins are always reserved (losing them loses the debugger); crystal pins are
reserved when the board ``.ioc`` puts an oscillator on them.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from rac_fw.domains.firmware.facts.load import PINS_JSON_FORMAT

_PIN_NAME = re.compile(r"^(P[A-K]\d+(?:_C)?)")
_AF_VALUE = re.compile(r"^GPIO_AF(\d+)_")
_ANALOG = re.compile(r"^(ADC\d*_IN|DAC\d*_OUT|COMP\d*_IN|OPAMP\d*_V)")
_SWD = {
    "SYS_JTMS-SWDIO": "SWD debug (SWDIO)",
    "SYS_JTCK-SWCLK": "SWD debug (SWCLK)",
    "DEBUG_JTMS-SWDIO": "SWD debug (SWDIO)",
    "DEBUG_JTCK-SWCLK": "SWD debug (SWCLK)",
}
_OSCILLATOR_SIGNALS = {"RCC_OSC_IN", "RCC_OSC_OUT", "RCC_OSC32_IN", "RCC_OSC32_OUT"}


class PinImportError(ValueError):
    """An input file is missing or not ST pin data; the message names the file."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _parse_xml(path: Path) -> ET.Element:
    if not path.is_file():
        raise PinImportError(f"file not found: {path}")
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise PinImportError(f"{path}: not valid XML ({exc})") from exc


def _normalize(name: str) -> str | None:
    match = _PIN_NAME.match(name)
    return match.group(1) if match else None


def _af_table(modes: ET.Element) -> dict[tuple[str, str], int]:
    """(pin, signal) → AF number, from the GPIO IP modes file."""
    table: dict[tuple[str, str], int] = {}
    for gpio_pin in modes.iter():
        if _local(gpio_pin.tag) != "GPIO_Pin":
            continue
        pin = _normalize(gpio_pin.get("Name", ""))
        if pin is None:
            continue
        for pin_signal in gpio_pin:
            if _local(pin_signal.tag) != "PinSignal":
                continue
            for value in pin_signal.iter():
                match = _AF_VALUE.match(value.text or "") if _local(value.tag) == "PossibleValue" else None
                if match:
                    table.setdefault((pin, pin_signal.get("Name", "")), int(match.group(1)))
    return table


def _board_wiring(ioc: Path) -> dict[str, tuple[str, str]]:
    """pin → (signal, label) for every pin the board configuration assigns."""
    if not ioc.is_file():
        raise PinImportError(f"board file not found: {ioc}")
    signals: dict[str, str] = {}
    labels: dict[str, str] = {}
    for line in ioc.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        base, _, attribute = key.rpartition(".")
        pin = _normalize(base.replace("\\", ""))
        if pin is None:
            continue
        if attribute == "Signal":
            signals[pin] = value
        elif attribute == "GPIO_Label":
            labels[pin] = value
    return {pin: (signal, labels.get(pin, "")) for pin, signal in signals.items()}


def import_pins(mcu_xml: Path, gpio_modes_xml: Path) -> dict[str, Any]:
    """Build the chip's ``pins.json`` dictionary (deterministic: sorted signals, sorted keys)."""
    mcu = _parse_xml(mcu_xml)
    if _local(mcu.tag) != "Mcu":
        raise PinImportError(f"{mcu_xml}: root element is {_local(mcu.tag)!r}, expected an ST 'Mcu' file")
    afs = _af_table(_parse_xml(gpio_modes_xml))
    pins: dict[str, dict[str, Any]] = {}
    for element in mcu:
        if _local(element.tag) != "Pin" or element.get("Type") != "I/O":
            continue
        name = _normalize(element.get("Name", ""))
        if name is None:
            continue
        functions: list[list[Any]] = []
        analog: list[str] = []
        reserved: str | None = None
        for signal_element in element:
            signal = signal_element.get("Name", "")
            if _local(signal_element.tag) != "Signal" or signal == "GPIO" or "_EXTI" in signal:
                continue
            if signal in _SWD:
                reserved = _SWD[signal]
            if _ANALOG.match(signal):
                analog.append(signal)
            else:
                functions.append([signal, afs.get((name, signal))])
        record: dict[str, Any] = {"functions": sorted(functions, key=lambda f: (f[1] is None, f[1] or 0, f[0]))}
        if analog:
            record["analog"] = sorted(analog)
        if reserved:
            record["reserved"] = reserved
        pins[name] = record
    return {
        "format": PINS_JSON_FORMAT,
        "mcu": mcu.get("RefName"),
        "package": mcu.get("Package"),
        "source": {"mcu": mcu_xml.name, "gpio_modes": gpio_modes_xml.name},
        "pins": dict(sorted(pins.items(), key=lambda item: _pin_sort_key(item[0]))),
    }


def import_board_pins(board_ioc: Path, chip: dict[str, Any]) -> dict[str, Any]:
    """Build a board's ``board_pins.json`` from its CubeMX ``.ioc``: what the board wires to each pin of
    the chip, and the pins it reserves (crystal pins the board puts an oscillator on).

    A separate file in the board pack, so a second board on the same chip gets its own wiring and
    never inherits another board's crystal or LED pins."""
    wiring = _board_wiring(board_ioc)
    pins = chip["pins"]
    reserved = {
        pin: f"crystal/clock input ({signal}) on this board"
        for pin, (signal, _) in sorted(wiring.items(), key=lambda item: _pin_sort_key(item[0]))
        if pin in pins and signal in _OSCILLATOR_SIGNALS
    }
    board_wiring = {
        pin: f"{signal} ({label})" if label else signal
        for pin, (signal, label) in sorted(wiring.items())
        if pin in pins and not signal.startswith("VP_")
    }
    return {"format": PINS_JSON_FORMAT, "source": {"board": board_ioc.name}, "reserved": reserved,
            "wiring": board_wiring}


def _pin_sort_key(name: str) -> tuple[str, int, str]:
    match = re.match(r"P([A-K])(\d+)(.*)", name)
    return (match.group(1), int(match.group(2)), match.group(3)) if match else (name, 0, "")


def dumps_pins(data: dict[str, Any]) -> str:
    """One pin per line, so a diff shows exactly which pin's facts changed."""
    head = {k: v for k, v in data.items() if k != "pins"}
    lines = ["{"]
    for key in sorted(head):
        lines.append(f"{json.dumps(key)}:{json.dumps(head[key], sort_keys=True)},")
    rows = [f" {json.dumps(name)}:{json.dumps(record, sort_keys=True)}" for name, record in data["pins"].items()]
    lines.append('"pins":{\n' + ",\n".join(rows) + "\n}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dumps_board_pins(data: dict[str, Any]) -> str:
    """The board's pin file, one pin per line like ``pins.json``."""
    return json.dumps(data, sort_keys=True, indent=0) + "\n"
