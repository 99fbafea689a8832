"""``rac-fw pcb import-footprints`` and ``rac-fw pcb import-board``: the importers that write the
project's compact PCB data (KiCad's land patterns for the quick suite; tasks derived from real boards).

Both write derived data only — never a library file or a board — with its source and licence, and
print whether each file changed; an existing file that would change is kept unless ``--force``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rac_fw.console.output import console, fail_with
from rac_fw.contract import Evidence


def _write(path: Path, text: str, force: bool) -> str:
    if path.exists():
        if path.read_text(encoding="utf-8") == text:
            return "unchanged"
        if not force:
            fail_with([Evidence(code="E_FILE_EXISTS", location=str(path),
                                message=f"{path} exists and would change; pass --force to overwrite it")])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail_with([Evidence(code="E_FILE", location=str(path), message=f"cannot write {path}: {exc.strerror or exc}")])
    return "written"


def import_footprints(
    library: Annotated[Path, typer.Option(help="KiCad's footprint library (Debian: kicad-footprints).")] = Path(
        "/usr/share/kicad/footprints"),
    out: Annotated[Path | None, typer.Option(help="Library file to write (default: the project's).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite a file that would change.")] = False,
) -> None:
    """Read every land pattern the quick suite names from KiCad's library into the project's library file."""
    from rac_fw.domains.pcb.footprints import LIBRARY_FILE
    from rac_fw.domains.pcb.kicad_lib import LibraryError, dumps, library_document
    from rac_fw.domains.pcb.tasks import all_tasks

    ids = sorted({c.footprint for t in all_tasks().values() for c in t.components if c.land is None})
    try:
        doc = library_document(ids, library)
    except LibraryError as exc:
        fail_with([Evidence(code="E_LIBRARY", location="--library", objects=[str(library)], message=str(exc))])
    target = out or LIBRARY_FILE
    state = _write(target, dumps(doc), force)
    console.print(f"{len(ids)} footprints from {escape(str(library))} ({doc['source']['version']}): "
                  f"{escape(str(target))} {state}")


def import_board(
    boards: Annotated[list[Path], typer.Argument(help="Board folders, each with board.kicad_pcb and SOURCE.md.")],
    out: Annotated[Path | None, typer.Option(help="Folder for NAME.json (default: the project's board data).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite a file that would change.")] = False,
) -> None:
    """Derive placement, routing, combined and repair tasks from real boards into compact documents."""
    from rac_fw.domains.pcb.board_derive import derive, dumps_board
    from rac_fw.domains.pcb.board_tasks import BOARDS_DIR
    from rac_fw.domains.pcb.kicad_board import BoardFileError

    target = out or BOARDS_DIR
    for folder in boards:
        try:
            doc = derive(folder)
        except (OSError, BoardFileError, ValueError) as exc:
            fail_with([Evidence(code="E_BOARD", location=str(folder), objects=[folder.name], message=str(exc))])
        state = _write(target / f"{doc['name']}.json", dumps_board(doc), force)
        h = doc["human"]
        console.print(f"{escape(doc['name'])}: {h['parts']} parts, {h['nets']} nets, {len(doc['tasks'])} tasks "
                      f"({escape(doc['source']['licence'])}): {state}")
