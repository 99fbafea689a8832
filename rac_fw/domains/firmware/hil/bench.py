"""The bench file: which boards are connected, and how to reach each (twister's hardware-map style).

A bench file is a YAML list, one entry per board, with twister's field names where they mean the same
thing (``platform``, ``product``, ``runner``, ``serial``, ``baud``, ``connected``). Two deliberate
differences: ``id`` is the *board* name used by ``--run board:ID`` (twister uses the probe's serial
number there), and the probe's unique ID lives in ``probe``; ``target`` is the rac-fw target id that
flashing must match. A ``qemu`` runner entry is a "board" emulated by QEMU, so CI runs the same tests.
``app``/``expect``/``timeout`` describe the smoke test ``rac-fw hil run`` uses when no app is given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.backends import BackendError

#: Where the bench file is looked for when none is given.
DEFAULT_BENCH = Path("hil") / "bench.yaml"


class BenchError(BackendError):
    """The bench file or a board lookup is unusable; ``evidence`` is located in the file.

    A ``BackendError`` so that ``select_runner("board:ID")`` callers handle one exception type.
    """


class BenchBoard(BaseModel):
    """One board on the bench (or one QEMU machine standing in for a board)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="Board name, used as `--run board:ID`.")
    target: str = Field(description="rac-fw target id of the chip on this board (flashing must match it).")
    runner: Literal["pyocd", "esptool", "qemu"] = Field(description="How images get onto the board.")
    platform: str | None = Field(default=None, description="Zephyr board name (twister's `platform`).")
    product: str | None = Field(default=None, description="Probe product, e.g. `STM32 STLink` (informational).")
    probe: str | None = Field(default=None, description="Debug probe unique ID (`pyocd list`).")
    serial: str | None = Field(default=None, description="Console serial port, e.g. /dev/ttyACM0.")
    baud: int = Field(default=115200, gt=0)
    connected: bool = True
    erase: Literal["chip", "sector", "auto"] = "auto"
    pack: Path | None = Field(default=None, description="CMSIS .pack file for chips pyOCD lacks.")
    flash_timeout: float = Field(default=120.0, gt=0)
    port_wait: float = Field(default=5.0, gt=0, description="Seconds to wait for the port to (re)appear.")
    app: Path | None = Field(default=None, description="Smoke-test app: ELF, artifact dir or plan file.")
    framework: str | None = Field(
        default=None, description="Framework to lower a plan app with (default: the plan's, else the target's)."
    )
    expect: list[str] = Field(default_factory=list, description="Ordered console regexes of the smoke test.")
    forbid: list[str] = Field(default_factory=list, description="Console regexes that fail the smoke test.")
    timeout: float = Field(default=10.0, gt=0, description="Seconds the console expectations may take.")


class Bench(BaseModel):
    """A loaded bench file; relative paths in it are resolved against its directory."""

    path: Path
    boards: list[BenchBoard]

    def board(self, board_id: str) -> BenchBoard:
        for board in self.boards:
            if board.id == board_id:
                return board
        known = ", ".join(b.id for b in self.boards) or "none"
        raise BenchError(
            [
                Evidence(
                    code="E_UNKNOWN_BOARD",
                    message=f"no board {board_id!r} in {self.path}; boards: {known}",
                    location=str(self.path),
                    objects=[board_id],
                )
            ]
        )

    def resolve(self, path: Path) -> Path:
        """A path from the bench file, relative to the file's directory."""
        return path if path.is_absolute() else (self.path.parent / path)


def bench_path(path: Path | None) -> Path:
    """The bench file to use: the given one, ``$RAC_FW_BENCH``, or ``hil/bench.yaml`` here."""
    if path is not None:
        return path
    env = os.environ.get("RAC_FW_BENCH")
    return Path(env) if env else DEFAULT_BENCH


def load_bench(path: Path | None = None) -> Bench:
    """Read and check a bench file; every problem is reported with its entry and field."""
    where = bench_path(path)
    try:
        data = yaml.safe_load(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(
            [
                Evidence(
                    code="E_FILE",
                    message=f"bench file not found: {where} (pass --bench FILE or set RAC_FW_BENCH)",
                    location=str(where),
                )
            ]
        ) from None
    except (OSError, yaml.YAMLError) as exc:
        raise BenchError(
            [Evidence(code="E_SYNTAX", message=f"cannot read bench file: {exc}", location=str(where))]
        ) from None
    if not isinstance(data, list):
        raise BenchError(
            [Evidence(code="E_SYNTAX", message="a bench file is a YAML list of boards", location=str(where))]
        )
    boards: list[BenchBoard] = []
    evidence: list[Evidence] = []
    for index, entry in enumerate(data):
        try:
            boards.append(BenchBoard.model_validate(entry))
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(str(p) for p in err["loc"])
                evidence.append(
                    Evidence(code="E_BENCH", message=err["msg"], location=f"{where}: [{index}].{field}".rstrip("."))
                )
    evidence += _check_targets(boards, where)
    ids = [b.id for b in boards]
    evidence += [
        Evidence(code="E_BENCH", message=f"board id {i!r} appears more than once", location=str(where), objects=[i])
        for i in sorted({i for i in ids if ids.count(i) > 1})
    ]
    if evidence:
        raise BenchError(evidence)
    return Bench(path=where, boards=boards)


def _check_targets(boards: list[BenchBoard], where: Path) -> list[Evidence]:
    from rac_fw.domains.firmware.facts.load import target_ids

    known = target_ids()
    return [
        Evidence(
            code="E_BENCH",
            message=f"board {b.id!r}: unknown target {b.target!r}; targets: {', '.join(known)}",
            location=f"{where}: {b.id}.target",
            objects=[b.id, b.target],
        )
        for b in boards
        if b.target not in known
    ]
