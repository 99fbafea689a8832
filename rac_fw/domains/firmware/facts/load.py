"""Load fact packs into :class:`~.model.Target` (cached once per process): a board pack on a chip pack.

A *target* is one board carrying one chip. The chip facts live once per chip, the board facts once
per board, so a second board on a known chip is one new file:

- ``targets/chips/<chip>/chip.yaml``: hand-written chip facts (core, memory, bus masters, DMA,
  clocks, the ``flash``/``radio`` tables under ``extra``) and, for chips without ST pin data, a compact ``pins`` spec
  (ranges + per-pin overrides) the loader expands;
- ``targets/chips/<chip>/pins.json``: derived from ST's pin data by ``rac-fw targets import-pins``;
- ``targets/chips/<chip>/svd.json``: derived from the SVD by ``rac-fw targets import``;
- ``targets/boards/<id>/board.yaml``: the board (``chip: <chip>``, ``frameworks``, the ``board``
  section: LEDs, buttons, console, devicetree names, reserved pins, PlatformIO/pyOCD ids), board-level
  ``flash``/``network`` entries under ``extra`` (merged key by key over the chip's) and ``pins.overrides``;
- ``targets/boards/<id>/board_pins.json``: what a CubeMX board configuration wires to each pin
  (``rac-fw targets import-pins --board``), STM32 boards only.

The target id is the board folder name; plans name it (``target: stm32h743``), so it never changes
when a chip pack is shared. ``load_target`` validates the merged data against the model's dataclasses
with pydantic, and checks each file's top-level keys, so a typo in a pack is a located
:class:`TargetFileError`, never a half-loaded target. Registers are left out of the cached ``Target``
(loading stays fast) and come from :func:`peripheral` on demand.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import fields
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


def _duplicate_keys(node: yaml.Node, path: Path, trail: str = "") -> None:
    """A mapping key written twice (YAML keeps the last one silently, dropping facts a merge left above)."""
    if isinstance(node, yaml.MappingNode):
        seen: set[object] = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if name in seen:
                raise TargetFileError(f"{path}:{key.start_mark.line + 1}", f"key {trail}{name} is given twice")
            seen.add(name)
            _duplicate_keys(value, path, f"{trail}{name}.")
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _duplicate_keys(item, path, trail)


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
    """The folder holding ``chips/`` and ``boards/``."""
    return data_dir("targets")


def chips_root() -> Path:
    """One sub-folder per chip pack (``chip.yaml``, ``svd.json``, ``pins.json``)."""
    return targets_root() / "chips"


def boards_root() -> Path:
    """One sub-folder per board pack (``board.yaml``), named by target id."""
    return targets_root() / "boards"


def target_ids() -> list[str]:
    """Ids of every target (board pack) shipped with this installation, sorted."""
    return sorted(p.parent.name for p in boards_root().glob("*/board.yaml"))


def chip_ids() -> list[str]:
    """Ids of every chip pack shipped with this installation, sorted."""
    return sorted(p.parent.name for p in chips_root().glob("*/chip.yaml"))


def _pack_dir(target_id: str) -> Path:
    folder = boards_root() / target_id
    if not (folder / "board.yaml").is_file():
        raise UnknownTarget(target_id, target_ids())
    return folder


@cache
def chip_dir(target_id: str) -> Path:
    """The chip pack folder of target ``target_id`` (the ``chip:`` its ``board.yaml`` names)."""
    folder = _pack_dir(target_id)
    return _chip_folder(folder, _read_yaml(folder / "board.yaml"), chips_root())


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


def _expand_pin_spec(spec: dict[str, Any], where: Path) -> dict[str, dict[str, Any]]:
    """Expand a ``chip.yaml`` pins spec (ports/ranges + overrides) into per-pin records.

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
            raise TargetFileError(f"{where}:pins.overrides.{name}", "not a pin of the ranges above")
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


#: Top-level keys each file may hold. Checked before merging, so a chip key in ``board.yaml`` (or a typo
#: anywhere) is a located error instead of a fact the merge silently drops or overrides. A chip pack
#: holds every ``Target`` field except the board's and the derived ones, so a new typed fact (one
#: optional field on ``Target``) is a chip key at once.
BOARD_KEYS = frozenset({"id", "chip", "frameworks", "board", "extra", "pins"})
_DERIVED = frozenset({"chip", "peripherals", "svd_device", "irq_count", "sdk"})
#: The family tables a pack writes under ``extra:`` (a chip's and a board's, merged key by key): typed
#: ``Target`` fields like every other fact, owned by ``facts/storage.py``, ``radio.py`` and ``network.py``.
EXTRA_KEYS = frozenset({"flash", "radio", "network"})
CHIP_KEYS = frozenset(
    {f.name for f in fields(Target)} - _DERIVED - (BOARD_KEYS - {"id"}) - EXTRA_KEYS | {"pins", "extra"}
)
#: Every ``Target`` field a pack states (the typed chip and board facts), as the observation lists them.
FACT_FIELDS = frozenset(CHIP_KEYS - {"pins", "extra"} | EXTRA_KEYS)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=_Loader)
        if node is not None:
            _duplicate_keys(node, path)
        raw = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise TargetFileError(f"{path}{where}", f"malformed YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise TargetFileError(str(path), "expected a mapping at the top level")
    return raw


def _check_keys(path: Path, data: dict[str, Any], allowed: frozenset[str]) -> None:
    for key in data:
        if key not in allowed:
            near = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise TargetFileError(f"{path}:{key}", f"unknown key{hint}; allowed: {', '.join(sorted(allowed))}")


def _chip_folder(board_folder: Path, board: dict[str, Any], chips: Path) -> Path:
    chip = board.get("chip")
    if not isinstance(chip, str) or not (chips / chip / "chip.yaml").is_file():
        known = sorted(p.parent.name for p in chips.glob("*/chip.yaml"))
        raise TargetFileError(f"{board_folder / 'board.yaml'}:chip",
                              f"names no chip pack: {chip!r}; known: {', '.join(known)}")
    return chips / chip


def _merge_tables(chip: dict[str, Any], board: dict[str, Any]) -> dict[str, Any]:
    """``board`` merged over ``chip`` key by key (nested mappings too): a board adds its own entries to a
    chip table (``extra.flash.partitions``) or restates one for its wiring."""
    merged = dict(chip)
    for key, value in board.items():
        base = merged.get(key)
        merged[key] = _merge_tables(base, value) if isinstance(base, dict) and isinstance(value, dict) else value
    return merged


def _chip_pins(folder: Path, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    pins_path = folder / "pins.json"
    if not pins_path.is_file():
        return _expand_pin_spec(spec, folder / "chip.yaml")
    pins = _pins_from_json(_read_json(pins_path, PINS_JSON_FORMAT))
    for name, override in (spec.get("overrides") or {}).items():
        if name not in pins:
            raise TargetFileError(f"{folder / 'chip.yaml'}:pins.overrides.{name}", "no such pin in pins.json")
        pins[name].update(override)
    return pins


def _merge(board_folder: Path, chips: Path) -> tuple[dict[str, Any], Path]:
    """The chip pack and the board pack of ``board_folder`` as one mapping shaped like ``Target``."""
    board_path = board_folder / "board.yaml"
    raw_board = _read_yaml(board_path)
    _check_keys(board_path, raw_board, BOARD_KEYS)
    if raw_board.get("id") != board_folder.name:
        raise TargetFileError(f"{board_path}:id", f"is {raw_board.get('id')!r}, folder is {board_folder.name!r}")
    folder = _chip_folder(board_folder, raw_board, chips)
    chip_path = folder / "chip.yaml"
    data = _read_yaml(chip_path)
    _check_keys(chip_path, data, CHIP_KEYS)
    if data.get("id") != folder.name:
        raise TargetFileError(f"{chip_path}:id", f"is {data.get('id')!r}, folder is {folder.name!r}")
    board_pin_spec = raw_board.get("pins") or {}
    _check_keys(board_path, {f"pins.{k}": v for k, v in board_pin_spec.items()}, frozenset({"pins.overrides"}))
    pins = _chip_pins(folder, data.pop("pins", None) or {})
    board = dict(raw_board.get("board") or {})
    board_pins_path = board_folder / "board_pins.json"
    if board_pins_path.is_file():
        board_pins = _read_json(board_pins_path, PINS_JSON_FORMAT)
        for name, why in board_pins.get("reserved", {}).items():
            if name not in pins:
                raise TargetFileError(f"{board_pins_path}:reserved.{name}", "no such pin on the chip")
            pins[name]["reserved"] = why
        taken = {led["pin"] for led in board.get("leds", ())} | {b["pin"] for b in board.get("buttons", ())}
        wired = {pin: what for pin, what in board_pins.get("wiring", {}).items() if pin not in taken}
        board["reserved_pins"] = {**wired, **(board.get("reserved_pins") or {})}
    for name, override in (board_pin_spec.get("overrides") or {}).items():
        if name not in pins:
            raise TargetFileError(f"{board_path}:pins.overrides.{name}", f"no such pin on chip {folder.name}")
        pins[name].update(override)
    data["id"] = board_folder.name
    data["chip"] = folder.name
    if "frameworks" in raw_board:
        data["frameworks"] = raw_board["frameworks"]
    for path, raw in ((chip_path, data), (board_path, raw_board)):
        for key in raw.get("extra") or {}:
            if key not in EXTRA_KEYS:
                allowed = ", ".join(sorted(EXTRA_KEYS))
                raise TargetFileError(f"{path}:extra.{key}", f"not a key of extra (only {allowed}): chip facts "
                                      "are typed Target fields (facts/chip.py)")
    data.update(_merge_tables(data.pop("extra", None) or {}, raw_board.get("extra") or {}))
    data["board"] = board
    data["pins"] = pins
    svd = _svd_facts(folder)
    if svd is not None:
        data["peripherals"] = _peripherals_from_svd(svd)
        data["svd_device"] = svd["device"]["name"]
        data["irq_count"] = max((row[0] for row in svd["interrupts"]), default=-1) + 1
    return data, folder


@cache
def _adapter() -> TypeAdapter[Target]:
    return TypeAdapter(Target)


@cache
def load_target(target_id: str) -> Target:
    """The facts of one target, validated and cached for the life of the process."""
    return load_pack(_pack_dir(target_id))


def _source(loc: tuple[Any, ...], board: dict[str, Any], chip: Path, board_folder: Path) -> Path:
    """The file a merged value at ``loc`` came from, so a validation error names the file to fix."""
    head = loc[0] if loc else None
    if head == "peripherals":
        return chip / "svd.json"
    if head in ("board", "frameworks", "id", "chip"):
        return board_folder / "board.yaml"
    if head == "pins":
        overrides = (board.get("pins") or {}).get("overrides") or {}
        if len(loc) > 1 and loc[1] in overrides:
            return board_folder / "board.yaml"
        return chip / ("pins.json" if (chip / "pins.json").is_file() else "chip.yaml")
    if head in EXTRA_KEYS:
        node: Any = board.get("extra") or {}
        for part in loc:
            if not isinstance(node, dict) or part not in node:
                return chip / "chip.yaml" if isinstance(node, dict) else board_folder / "board.yaml"
            node = node[part]
        return board_folder / "board.yaml"
    return chip / "chip.yaml"


def load_pack(folder: Path, chips: Path | None = None) -> Target:
    """Load and validate the board pack in ``folder`` on its chip pack (uncached; the folder name is the
    target id). ``chips`` is the folder of chip packs, by default ``chips/`` beside the boards' folder.

    Validation errors are located in the file the offending value came from: ``board.yaml`` for board
    facts, ``pins.json`` for pin data it supplied, ``svd.json`` for peripherals, else ``chip.yaml``.
    """
    chips = chips if chips is not None else folder.parent.parent / "chips"
    data, chip = _merge(folder, chips)
    try:
        return _adapter().validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first["loc"]
        path = ("extra." if loc and loc[0] in EXTRA_KEYS else "") + ".".join(str(part) for part in loc)
        source = _source(tuple(loc), _read_yaml(folder / "board.yaml"), chip, folder)
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise TargetFileError(f"{source}:{path}", f"{first['msg']}{more}") from exc


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
    svd = _svd_facts(chip_dir(target_id)) or {}
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
    svd = _svd_facts(chip_dir(target_id)) or {}
    return [(number, name, tuple(owners)) for number, name, owners in svd.get("interrupts", ())]
