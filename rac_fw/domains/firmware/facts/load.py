"""Load fact packs from ``targets/<id>/`` into :class:`~.model.Target` (cached once per process).

A pack is up to three files:

- ``target.yaml``: hand-written facts (core, memory, bus masters, DMA, clocks, board, extra) and, for
  chips without ST pin data, a compact ``pins`` spec (ranges + per-pin overrides) the loader expands;
- ``pins.json``: derived from ST's pin data by ``rac-fw targets import-pins`` (STM32 only);
- ``svd.json``: derived from the SVD by ``rac-fw targets import`` (peripherals, IRQs, registers).

``load_target`` validates the merged data against the model's dataclasses with pydantic, so a typo in a
pack is a located :class:`TargetFileError`, never a half-loaded target. Registers are left out of the
cached ``Target`` (loading stays fast) and come from :func:`peripheral` on demand.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from rac_fw.domains.firmware.facts.model import Field, Peripheral, Register, Target
from rac_fw.domains.firmware.facts.svd_import import SVD_JSON_FORMAT
from rac_fw.resources import data_dir

PINS_JSON_FORMAT = 1
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UnknownTarget(LookupError):
    """No fact pack with this id; carries the known ids and the closest matches."""

    def __init__(self, target_id: str, known: list[str]):
        self.target_id, self.known = target_id, known
        self.near = difflib.get_close_matches(target_id, known, n=3, cutoff=0.4)
        hint = f" (did you mean {', '.join(self.near)}?)" if self.near else ""
        super().__init__(f"unknown target {target_id!r}{hint}; known: {', '.join(known)}")


class UnknownPeripheral(LookupError):
    """The target has no peripheral instance with this name; carries near matches."""

    def __init__(self, target_id: str, name: str, known: list[str]):
        self.target_id, self.name = target_id, name
        self.near = difflib.get_close_matches(name.upper(), known, n=5, cutoff=0.5)
        hint = f"; near: {', '.join(self.near)}" if self.near else ""
        super().__init__(f"{target_id} has no peripheral {name!r}{hint}")


class TargetFileError(ValueError):
    """A fact-pack file is malformed; ``location`` is ``file:field.path``."""

    def __init__(self, location: str, message: str):
        self.location = location
        super().__init__(f"{location}: {message}")


def targets_root() -> Path:
    """The folder holding one sub-folder per fact pack."""
    return data_dir("targets")


def target_ids() -> list[str]:
    """Ids of every fact pack shipped with this installation, sorted."""
    return sorted(p.parent.name for p in targets_root().glob("*/target.yaml"))


def _pack_dir(target_id: str) -> Path:
    folder = targets_root() / target_id
    if not (folder / "target.yaml").is_file():
        raise UnknownTarget(target_id, target_ids())
    return folder


def _read_json(path: Path, expected_format: int) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TargetFileError(f"{path}:{exc.lineno}", f"invalid JSON: {exc.msg}") from exc
    if data.get("format") != expected_format:
        raise TargetFileError(
            str(path), f"format {data.get('format')!r}, expected {expected_format}: re-run the importer"
        )
    return data


@cache
def _svd_facts(folder: Path) -> dict[str, Any] | None:
    """The raw ``svd.json`` of a pack folder (None when the pack has none), parsed once per process."""
    path = folder / "svd.json"
    return _read_json(path, SVD_JSON_FORMAT) if path.is_file() else None


def _expand_pin_spec(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Expand a ``target.yaml`` pins spec (ports/ranges + overrides) into per-pin records.

    ``ranges`` entries are ``{prefix, first, last, width}``: pin names ``<prefix><n>`` with ``n``
    zero-padded to ``width`` digits (``P0.`` + 2 → ``P0.07``; ``GPIO`` + 0 → ``GPIO7``).
    """
    pins: dict[str, dict[str, Any]] = {}
    routing = spec.get("routing", "af")
    for block in spec.get("ranges", ()):
        for number in range(int(block["first"]), int(block["last"]) + 1):
            name = f"{block['prefix']}{number:0{int(block.get('width', 0))}d}"
            pins[name] = {"name": name, "routing": routing}
    for name, override in (spec.get("overrides") or {}).items():
        if name not in pins:
            raise TargetFileError(f"target.yaml:pins.overrides.{name}", "not a pin of the ranges above")
        pins[name].update(override)
    return pins


def _pins_from_json(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    pins: dict[str, dict[str, Any]] = {}
    for name, record in data["pins"].items():
        pin: dict[str, Any] = {"name": name, "routing": "af"}
        pin["functions"] = [{"signal": signal, "af": af} for signal, af in record.get("functions", ())]
        for key in ("analog", "reserved", "notes"):
            if key in record:
                pin[key] = record[key]
        pins[name] = pin
    return pins


def _peripherals_from_svd(svd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "name": name,
            "group": record["group"],
            "base": record["base"],
            "derived_from": record.get("derived_from"),
            "interrupts": [{"name": irq, "number": number} for irq, number in record.get("interrupts", ())],
        }
        for name, record in svd["peripherals"].items()
    }


def _merge(target_id: str, folder: Path) -> dict[str, Any]:
    try:
        raw = yaml.load((folder / "target.yaml").read_text(encoding="utf-8"), Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise TargetFileError(f"{folder / 'target.yaml'}{where}", f"malformed YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise TargetFileError(str(folder / "target.yaml"), "expected a mapping at the top level")
    data = dict(raw)
    if data.get("id") != target_id:
        raise TargetFileError(f"{folder / 'target.yaml'}:id", f"is {data.get('id')!r}, folder is {target_id!r}")
    pin_spec = data.pop("pins", None) or {}
    pins_path = folder / "pins.json"
    board = dict(data.get("board") or {})
    if pins_path.is_file():
        pin_data = _read_json(pins_path, PINS_JSON_FORMAT)
        pins = _pins_from_json(pin_data)
        taken = {led["pin"] for led in board.get("leds", ())} | {b["pin"] for b in board.get("buttons", ())}
        wired = {pin: what for pin, what in pin_data.get("board_wiring", {}).items() if pin not in taken}
        board["reserved_pins"] = {**wired, **(board.get("reserved_pins") or {})}
        for name, override in (pin_spec.get("overrides") or {}).items():
            if name not in pins:
                raise TargetFileError(f"{folder / 'target.yaml'}:pins.overrides.{name}", "no such pin in pins.json")
            pins[name].update(override)
    else:
        pins = _expand_pin_spec(pin_spec)
    data["board"] = board
    data["pins"] = pins
    svd = _svd_facts(folder)
    if svd is not None:
        data["peripherals"] = _peripherals_from_svd(svd)
        data["svd_device"] = svd["device"]["name"]
        data["irq_count"] = max((row[0] for row in svd["interrupts"]), default=-1) + 1
    return data


@cache
def _adapter() -> TypeAdapter[Target]:
    return TypeAdapter(Target)


@cache
def load_target(target_id: str) -> Target:
    """The facts of one target, validated and cached for the life of the process."""
    return load_pack(_pack_dir(target_id))


def load_pack(folder: Path) -> Target:
    """Load and validate the pack in ``folder`` (uncached; the folder name is the target id).

    Validation errors are located in the file the offending value came from: ``pins.json`` for pin
    data it supplied, ``svd.json`` for peripherals, else ``target.yaml``.
    """
    data = _merge(folder.name, folder)
    try:
        return _adapter().validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first["loc"]
        path = ".".join(str(part) for part in loc)
        source = "target.yaml"
        if loc and loc[0] == "peripherals":
            source = "svd.json"
        elif loc and loc[0] == "pins" and (folder / "pins.json").is_file():
            source = "pins.json"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise TargetFileError(f"{folder / source}:{path}", f"{first['msg']}{more}") from exc


def _registers(rows: list[list[Any]]) -> tuple[Register, ...]:
    return tuple(
        Register(
            name=name,
            offset=offset,
            size_bits=size,
            reset=reset,
            access=access,
            fields=tuple(Field(name=f, lsb=lsb, width=width) for f, lsb, width in fields),
        )
        for name, offset, size, reset, access, fields in rows
    )


@cache
def peripheral(target_id: str, name: str) -> Peripheral:
    """A peripheral instance with its registers (empty when its group is not imported).

    Derived instances (``USART2`` derived from ``USART1``) share the layout of their base instance.
    """
    target = load_target(target_id)
    found = target.peripherals.get(name) or target.peripherals.get(name.upper())
    if found is None:
        raise UnknownPeripheral(target_id, name, sorted(target.peripherals))
    svd = _svd_facts(_pack_dir(target_id)) or {}
    layout = found.derived_from or found.name
    rows = svd.get("registers", {}).get(layout) or svd.get("registers", {}).get(found.name) or []
    return Peripheral(
        name=found.name,
        group=found.group,
        base=found.base,
        interrupts=found.interrupts,
        registers=_registers(rows),
        derived_from=found.derived_from,
    )


def interrupts(target_id: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """The complete device interrupt list ``(number, vector name, peripherals)``, sorted by number.

    This is what vector tables and device headers are generated from; empty without an SVD.
    """
    svd = _svd_facts(_pack_dir(target_id)) or {}
    return [(number, name, tuple(owners)) for number, name, owners in svd.get("interrupts", ())]
