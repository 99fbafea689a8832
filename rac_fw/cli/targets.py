"""``rac-fw targets``: list targets, show a target's observation, and run the importers.

``list`` and ``show`` read only the committed fact packs (fast, no SVD parsing). ``import`` derives a
chip pack's ``svd.json`` from an SVD file, pyOCD's bundled SVDs or a cached CMSIS pack; ``import-pins``
derives the chip's ``pins.json`` from ST's open pin data, and with ``--board`` the board pack's
``board_pins.json`` from a CubeMX board configuration. Both take a chip id or a target id (then the
target's chip). Bad input exits 2 with a located message, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from rac_fw.cli.output import EXIT_FAIL, console, fail_with
from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.load import (
    TargetFileError,
    UnknownTarget,
    boards_root,
    chip_dir,
    chip_ids,
    chips_root,
    load_target,
    target_ids,
)
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.observe import UnknownDetailKind, UnknownName, detail, summary
from rac_fw.domains.firmware.facts.pin_import import (
    PinImportError,
    dumps_board_pins,
    dumps_pins,
    import_board_pins,
    import_pins,
)
from rac_fw.domains.firmware.facts.svd_import import (
    SvdImportError,
    dumps_facts,
    svd_from_pack,
    svd_from_path,
    svd_from_pyocd,
)

targets_app = typer.Typer(help="Target fact packs: list, show (observation), import (SVD, ST pin data).",
                          no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable JSON.")]


def _target(target_id: str, as_json: bool) -> Target:
    try:
        return load_target(target_id)
    except UnknownTarget as exc:
        fail_with(
            [Evidence(code="E_UNKNOWN_TARGET", message=str(exc), location="ID", objects=[target_id, *exc.near])],
            as_json=as_json,
        )
    except TargetFileError as exc:
        fail_with([Evidence(code="E_TARGET_FILE", message=str(exc), location=exc.location)], as_json=as_json)


@targets_app.command("list")
def list_targets(as_json: JsonFlag = False) -> None:
    """List the fact packs shipped with this installation."""
    targets = [_target(target_id, as_json) for target_id in target_ids()]
    if as_json:
        rows = [
            {"id": t.id, "chip": t.chip, "name": t.name, "board": t.board.name, "frameworks": list(t.frameworks),
             "zephyr_board": t.board.zephyr_board}
            for t in targets
        ]
        console.print_json(json.dumps({"targets": rows}))
        return
    table = Table("id", "chip", "board", "frameworks", "zephyr board")
    for t in targets:
        table.add_row(t.id, f"{t.name} ({t.chip})", t.board.name, ", ".join(t.frameworks), t.board.zephyr_board or "-")
    console.print(table)


def _print_summary(data: dict[str, Any]) -> None:
    core = data["core"]
    dcache = core["dcache"]
    cache_text = f"{dcache['size'] // 1024} KB / {dcache['line_bytes']} B lines" if dcache else "none"
    console.print(
        f"[bold]{escape(data['target'])}[/]: {escape(data['name'])} ({escape(data['vendor'])}), "
        f"core {escape(core['name'])}, FPU {core['fpu'] or 'none'}, MPU {'yes' if core['mpu'] else 'no'}, "
        f"D-cache {cache_text}; frameworks {', '.join(data['frameworks'])}"
    )
    memory = Table("region", "kind", "address", "size", "cacheable", "exec", "DMA masters", title="memory map")
    for region in data["memory"]:
        memory.add_row(
            region["name"], region["kind"], region["address"], f"{region['size'] // 1024} KB",
            "yes" if region["cacheable"] else "no", "yes" if region["executable"] else "no",
            ", ".join(region["dma"]) or "[red]none[/]",
        )
    console.print(memory)
    if data["dma"]:
        dma = Table("controller", "mem-to-mem", "channels", "max items", "reaches", "serves", title="DMA")
        for controller in data["dma"]:
            dma.add_row(
                controller["name"], "yes" if controller["m2m"] else "no", str(controller["channels"]),
                str(controller["max_items"]), ", ".join(controller["reaches"]), controller.get("serves", "any"),
            )
        console.print(dma)
    clocks = Table("clock", "max", *sorted({k for c in data["clocks"].values() for k in c if k != "max"}),
                   title="clocks (Hz)")
    columns = [c.header for c in clocks.columns][2:]
    for name, values in data["clocks"].items():
        clocks.add_row(name, f"{values['max']:,}", *[f"{values[k]:,}" if k in values else "-" for k in columns])
    console.print(clocks)
    board = data["board"]
    console.print(
        f"[bold]board[/] {escape(board['name'])}: zephyr {board['zephyr_board'] or '-'}, "
        f"idf {board['idf_target'] or '-'}, HAL {board['hal_family'] or '-'}; console {escape(str(board['console']))}"
    )
    console.print(f"  LEDs {', '.join(board['leds']) or '-'}; buttons {', '.join(board['buttons']) or '-'}")
    console.print(f"  aliases: {escape(', '.join(f'{k}={v}' for k, v in board['dt_aliases'].items()))}")
    pins = data["pins"]
    console.print(f"[bold]pins[/] ({pins['count']}, routing {', '.join(pins['routing'])}) free: "
                  + escape("; ".join(f"{port}{nums}" for port, nums in pins["free"].items())))
    for pin, why in pins["reserved"].items():
        console.print(f"  reserved {pin}: {escape(why)}")
    for pin, what in board["board_pins"].items():
        console.print(f"  board {pin}: {escape(what)}")
    console.print("[bold]peripherals[/] " + escape("; ".join(data["peripherals"].values())))
    console.print(f"[dim]extra facts: {', '.join(data['extra'])}; depth: --detail KIND NAME "
                  f"(peripheral, pin, region, dma, clock, extra)[/]")


def _print_detail(data: dict[str, Any]) -> None:
    table = Table("field", "value", title=f"{data['target']} {data['detail']} {data['name']}")
    for key, value in data.items():
        if key in ("target", "detail", "registers"):
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        table.add_row(key, escape(text))
    console.print(table)
    registers = data.get("registers") or []
    if registers:
        regs = Table("register", "offset", "reset", "access", "fields (lsb:width)")
        for reg in registers:
            fields = " ".join(f"{n}[{lsb}:{width}]" for n, (lsb, width) in reg["fields"].items())
            regs.add_row(reg["name"], f"0x{reg['offset']:03X}", f"0x{reg['reset']:08X}", reg["access"], fields)
        console.print(regs)


@targets_app.command("show")
def show(
    target_id: Annotated[str, typer.Argument(metavar="ID", help="Target id (see `rac-fw targets list`).")],
    detail_of: Annotated[
        tuple[str, str] | None,
        typer.Option("--detail", metavar="WHAT NAME",
                     help="Depth on one object: peripheral USART2, pin PA9, region DTCM, dma DMA1, clock APB1."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a target's observation (summary), or the detail of one named object."""
    target = _target(target_id, as_json)
    if detail_of is None:
        data = summary(target)
        if as_json:
            console.print_json(json.dumps(data))
        else:
            _print_summary(data)
        return
    what, name = detail_of
    try:
        result = detail(target, what, name)
    except UnknownDetailKind as exc:
        fail_with([Evidence(code="E_DETAIL_KIND", message=str(exc), location="--detail WHAT", objects=[what])],
                  as_json=as_json)
    except UnknownName as exc:
        code = "E_UNKNOWN_PIN" if exc.what == "pin" else "E_UNKNOWN_NAME"
        fail_with([Evidence(code=code, message=str(exc), location="--detail NAME", objects=[name, *exc.near])],
                  as_json=as_json)
    if as_json:
        console.print_json(json.dumps(result))
    else:
        _print_detail(result)


def _packs(pack_id: str, what: str) -> tuple[Path, Path | None]:
    """``(chip folder, board folder or None)`` for a chip id or a target id (whose chip is then used)."""
    if (boards_root() / pack_id / "board.yaml").is_file():
        try:
            return chip_dir(pack_id), boards_root() / pack_id
        except TargetFileError as exc:
            fail_with([Evidence(code="E_TARGET_FILE", message=str(exc), location=exc.location)])
    if (chips_root() / pack_id / "chip.yaml").is_file():
        return chips_root() / pack_id, None
    fail_with([Evidence(code="E_UNKNOWN_TARGET", location="ID", objects=[pack_id],
                        message=f"{what}: {pack_id!r} is neither a chip ({', '.join(chip_ids())}) "
                                f"nor a target ({', '.join(target_ids())})")])


def _write_or_check(path: Path, text: str, check: bool) -> None:
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            fail_with(
                [Evidence(code="E_STALE_FACTS", location=str(path),
                          message=f"{path} differs from what the importer derives now: re-run without --check")],
                exit_code=EXIT_FAIL,
            )
        console.print(f"{path} is up to date")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    console.print(f"wrote {path} ({len(text.encode()):,} bytes)")


@targets_app.command("import")
def import_svd(
    pack_id: Annotated[str, typer.Argument(metavar="ID", help="Chip id (targets/chips/) or target id (its chip).")],
    svd: Annotated[Path | None, typer.Option("--svd", help="Path of a CMSIS-SVD file.")] = None,
    pyocd_target: Annotated[str | None, typer.Option("--pyocd-target", help="A pyOCD built-in target name.")] = None,
    pack_device: Annotated[
        str | None, typer.Option("--pack-device", help="A device in cmsis-pack-manager's cache, e.g. STM32F407VGTx.")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of the pack.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Only compare with the existing file (exit 1 if stale).")]
    = False,
) -> None:
    """Derive the chip pack's svd.json (peripherals, IRQs, registers) from an SVD."""
    sources = [s for s in (svd, pyocd_target, pack_device) if s is not None]
    if len(sources) != 1:
        fail_with([Evidence(code="E_USAGE", location="--svd/--pyocd-target/--pack-device",
                            message="give exactly one SVD source: --svd PATH, --pyocd-target NAME or "
                                    "--pack-device DEVICE")])
    chip, _ = _packs(pack_id, "import")
    try:
        if svd is not None:
            facts = svd_from_path(svd)
        elif pyocd_target is not None:
            facts = svd_from_pyocd(pyocd_target)
        else:
            assert pack_device is not None
            facts = svd_from_pack(pack_device)
    except SvdImportError as exc:
        fail_with([Evidence(code="E_SVD_IMPORT", message=str(exc), location=str(svd or pyocd_target or pack_device))])
    _write_or_check(output or chip / "svd.json", dumps_facts(facts), check)


@targets_app.command("import-pins")
def import_pin_data(
    pack_id: Annotated[str, typer.Argument(metavar="ID", help="Chip id (targets/chips/) or target id (its chip).")],
    mcu: Annotated[Path, typer.Option("--mcu", help="ST MCU pin file, e.g. mcu/STM32F407VGTx.xml.")],
    gpio_modes: Annotated[Path, typer.Option("--gpio-modes", help="ST GPIO IP modes file (AF numbers).")],
    board: Annotated[Path | None, typer.Option("--board", help="CubeMX board configuration (.ioc); needs a target "
                                                              "id, whose board pack gets board_pins.json.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write pins.json here instead of the chip "
                                                                      "pack (board_pins.json beside it).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Only compare with the existing file (exit 1 if stale).")]
    = False,
) -> None:
    """Derive the chip's pins.json (signals, AF numbers, SWD pins) and, with --board, the board's
    board_pins.json (wiring, crystal pins) from ST's open pin data."""
    chip, board_pack = _packs(pack_id, "import-pins")
    if board is not None and board_pack is None and output is None:
        fail_with([Evidence(code="E_USAGE", location="--board", objects=[pack_id],
                            message=f"--board describes a board: give a target id on chip {pack_id} "
                                    "(its board pack gets board_pins.json), or --output")])
    try:
        data = import_pins(mcu, gpio_modes)
        wiring = import_board_pins(board, data) if board is not None else None
    except PinImportError as exc:
        fail_with([Evidence(code="E_PIN_IMPORT", message=str(exc), location=str(board or mcu))])
    pins_path = output or chip / "pins.json"
    _write_or_check(pins_path, dumps_pins(data), check)
    if wiring is not None:
        folder = pins_path.parent if output is not None or board_pack is None else board_pack
        _write_or_check(folder / "board_pins.json", dumps_board_pins(wiring), check)


def register(app: typer.Typer) -> None:
    app.add_typer(targets_app, name="targets")
