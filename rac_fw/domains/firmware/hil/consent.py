"""The one consent gate: nothing opens a board's serial port, enumerates a probe or programs a chip unless
the operator said so.

Every path that can reach hardware gets its runner from ``hil.board.board_runner`` (or ``runner_for``,
which sends ``board:ID`` there), which asks :func:`grant`: ``rac-fw hil flash|run``, ``rac-fw plan --run
board:ID``, the MCP server's ``run`` (``runner: "board:ID"``) and ``flash``, and the pytest plugin's
``dut``. ``rac-fw eval`` cannot reach a board (its judge runs QEMU only, ``tasks/judge.py``).
The gate asks three things, in order:

1. the id is a board id (letters, digits, ``_``, ``.``, ``-``; at most 64) — anything else is neither
   looked up nor echoed back;
2. a bench file was named (:class:`Consent.bench`): the CLI and the pytest plugin resolve theirs from
   ``--bench``, ``$RAC_FW_BENCH`` or ``hil/bench.yaml`` in the working directory (the operator's own shell);
   the MCP server only from its ``--bench`` — never a file that happens to sit in its working directory;
3. the board is in that file, and — unless its runner is an emulator — consent was given
   (``--allow-flash``).

**Emulators.** A bench entry whose runner declares no ``hardware`` (``qemu``) touches no hardware: the
image runs in a QEMU process on this machine. Such an entry passes the gate without ``--allow-flash`` (CI runs
``rac-fw hil run qemu-stm32f407`` and ``pytest hil --board qemu-stm32f407`` that way); it still has to be
named by a bench file, so the bench remains the one list of what may be run.

A :class:`Grant` is what :class:`~.board.BoardRunner` is built from: it takes nothing else, so no code
path can build one around the gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.backends import get_backend
from rac_fw.domains.firmware.hil.bench import BenchBoard, BenchError, load_bench

#: What a bench board id may look like (anything else is not looked up, nor echoed back).
BOARD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Consent:
    """What the operator decided for this process: whether boards may be written, and which bench file
    names them (``None``: none was named, so no board can be used)."""

    allow_flash: bool = False
    """Consent to open real boards and program them: ``--allow-flash`` on every front end."""
    bench: Path | None = None
    where: str = "the command line"
    """Who decides (``the server's operator``), for the evidence."""


@dataclass(frozen=True)
class Grant:
    """Proof that the gate let one bench board through (made only by :func:`grant`)."""

    board: BenchBoard
    bench_dir: Path
    hardware: bool
    """True for a real board (consent was given), False for an emulated one."""


def _refused(code: str, message: str, objects: list[str], fix: str, location: str = "board") -> BenchError:
    return BenchError([Evidence(code=code, message=message, location=location, objects=objects,
                                relaxations=[Relaxation(description=fix)])])


def grant(board_id: str, consent: Consent) -> Grant:
    """The gate: a :class:`Grant` for ``board_id``, or ``BenchError`` saying what is missing (nothing touched)."""
    if not BOARD_ID.fullmatch(board_id):
        raise _refused("E_UNKNOWN_BOARD", "not a bench board id (letters, digits, '_', '.', '-'; at most 64)", [],
                       "name a board of the bench file (`rac-fw hil list`)")
    if consent.bench is None:
        raise _refused("E_CONSENT", f"no bench file was named by {consent.where}, so board {board_id!r} cannot be "
                       "used (no bench file is looked for in the working directory)", [board_id],
                       "the operator starts the server with --bench FILE naming the board", "bench")
    bench = load_bench(consent.bench)
    board = bench.board(board_id)
    hardware = get_backend(board.runner).hardware  # the runner's declared capability: QEMU touches none
    if hardware and not consent.allow_flash:
        raise _refused("E_CONSENT", f"board {board.id!r} is real hardware ({board.runner} on "
                       f"{board.serial or 'no port'}) and {consent.where} did not allow writing to boards: nothing "
                       "was opened, enumerated or flashed", [board.id],
                       "the operator gives --allow-flash to let rac-fw open this board's port and program it")
    return Grant(board, bench.path.parent, hardware)
