"""``rac-fw hil list|flash|run``: the bench file's boards, flashing one, running expectations on them.

``run`` takes an app — a plan file (validated, lowered and built by the same pipeline as ``rac-fw
plan``, into ``.rac-fw/hil/<board>/``), a generated artifact directory (built first) or an ELF — and judges
the board's console with the same ordered-regex engine QEMU runs use; a QEMU entry in the bench stands
in for a board, so CI exercises the same path. A real board is opened and flashed only with
``--allow-flash`` (the consent gate, ``hil.consent``); an emulated one needs no consent. Output:
feedback verdicts and evidence; the captured console is ``console.log`` in the plan's artifact dir, or
``<app>/hil/<board>/`` (``--out`` moves both). Exit 0 all passed, 1 a board failed, 2 bad input (bench
file, board id, app, no consent).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rac_fw.console.output import (
    EXIT_FAIL,
    EXIT_INVALID,
    EXIT_PASS,
    console,
    emit_feedback,
    exit_code_for,
    fail_with,
)
from rac_fw.console.progress import track
from rac_fw.contract import Evidence, Feedback, Status
from rac_fw.domains.firmware.backends import FlashRequest, RunRequest
from rac_fw.domains.firmware.hil.bench import Bench, BenchBoard, BenchError, load_bench
from rac_fw.domains.firmware.hil.board import PLAN_SUFFIXES, board_runner, image_for
from rac_fw.domains.firmware.hil.consent import Consent

#: Where artifacts generated from plan apps go (one folder per board), unless ``--out`` says otherwise.
WORK_DIR = Path(".rac-fw") / "hil"

hil_app = typer.Typer(help="The bench: list boards, flash one, run console expectations on boards.")

BenchOption = Annotated[
    Path | None, typer.Option("--bench", help="Bench file (default: $RAC_FW_BENCH or hil/bench.yaml).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
AllowFlashOption = Annotated[bool, typer.Option(
    "--allow-flash", help="Let rac-fw open real boards' ports and program them (emulated boards need no consent).")]


def _bench(path: Path | None, as_json: bool) -> Bench:
    try:
        return load_bench(path)
    except BenchError as exc:
        fail_with(exc.evidence, as_json=as_json)


def _board(bench: Bench, board_id: str, as_json: bool) -> BenchBoard:
    try:
        return bench.board(board_id)
    except BenchError as exc:
        fail_with(exc.evidence, as_json=as_json)


def _port_state(board: BenchBoard) -> str:
    if board.runner == "qemu":
        return "emulated"
    if board.serial is None:
        return "no port"
    return "present" if Path(board.serial).exists() else "missing"


@hil_app.command("list")
def list_boards(bench_file: BenchOption = None, as_json: JsonOption = False) -> None:
    """List the bench's boards with their target, runner, probe and whether the port is there."""
    bench = _bench(bench_file, as_json)
    if as_json:
        rows = [b.model_dump(mode="json") | {"port_state": _port_state(b)} for b in bench.boards]
        console.print_json(json.dumps({"bench": str(bench.path), "boards": rows}))
        return
    console.print(f"[bold]{escape(str(bench.path))}[/]")
    width = max((len(b.id) for b in bench.boards), default=0)
    for b in bench.boards:
        parts = [f"{b.id:<{width}}", f"{b.target:<10}", f"{b.runner:<8}"]
        if b.probe:
            parts.append(f"probe {b.probe}")
        if b.serial:
            parts.append(f"{b.serial} @{b.baud} ({_port_state(b)})")
        elif b.runner == "qemu":
            parts.append("emulated")
        if not b.connected:
            parts.append("[not connected]")
        console.print("  " + escape("  ".join(parts)))


def _image(
    app: Path, target: str | None, builder: str, board: BenchBoard, work_dir: Path
) -> tuple[Path | None, str | None, list[Evidence], int]:
    """The image for ``app`` and its target, or evidence plus the exit code it deserves."""
    image, recorded, evidence = image_for(app, work_dir, builder, board.framework, board.target)
    if evidence or image is None:
        return None, None, evidence, EXIT_FAIL if recorded else EXIT_INVALID
    if target and recorded and target != recorded:
        mismatch = Evidence(
            code="E_TARGET_MISMATCH",
            message=f"{app} was generated for {recorded}, not {target}",
            objects=[recorded, target],
        )
        return None, None, [mismatch], EXIT_INVALID
    chosen = target or recorded
    if chosen is None:
        unknown = Evidence(
            code="E_INPUT",
            message=f"{app} records no target; pass --target so the board match is explicit",
            location=str(app),
        )
        return None, None, [unknown], EXIT_INVALID
    return image, chosen, [], EXIT_PASS


@hil_app.command()
def flash(
    board_id: Annotated[str, typer.Argument(help="Board id from the bench file.")],
    app: Annotated[Path, typer.Argument(help="ELF image or generated artifact directory.")],
    bench_file: BenchOption = None,
    target: Annotated[str | None, typer.Option("--target", help="Target of a bare ELF.")] = None,
    probe: Annotated[str | None, typer.Option("--probe", help="Probe unique ID (overrides the bench).")] = None,
    erase: Annotated[str, typer.Option("--erase", help="chip, sector or auto (bench default).")] = "auto",
    verify: Annotated[bool, typer.Option("--verify/--no-verify", help="Read back after programming.")] = True,
    builder: Annotated[str, typer.Option("--builder", help="Builder for an artifact directory.")] = "auto",
    allow_flash: AllowFlashOption = False,
    as_json: JsonOption = False,
) -> None:
    """Flash an image to one board after checking that the board's chip is the image's target."""
    bench = _bench(bench_file, as_json)
    try:  # the consent gate, before anything is built or opened
        runner = board_runner(board_id, Consent(allow_flash, bench.path))
    except BenchError as exc:
        fail_with(exc.evidence, as_json=as_json)
    board = runner.board
    image, chosen, evidence, code = _image(app, target, builder, board, WORK_DIR / board.id)
    if image is None or chosen is None:
        fail_with(evidence, exit_code=code, as_json=as_json)
    result = runner.flash(FlashRequest(image=image, target=chosen, probe=probe, erase=erase, verify=verify))
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "status": "pass" if result.ok else "fail",
                    "board": board.id,
                    "probe": result.probe,
                    "bytes_written": result.bytes_written,
                    "verified": result.verified,
                    "evidence": [e.model_dump(mode="json") for e in result.evidence],
                }
            )
        )
    elif result.ok:
        console.print(
            f"[green]flashed[/] {escape(str(image))} → {board.id} via {board.runner} "
            f"({result.bytes_written} bytes{', verified' if result.verified else ''})"
        )
    if not result.ok:
        if not as_json:
            fail_with(result.evidence, exit_code=EXIT_FAIL)
        raise typer.Exit(EXIT_FAIL)


def _run_one(
    bench: Bench,
    board: BenchBoard,
    app: Path | None,
    target: str | None,
    expect: list[str],
    forbid: list[str],
    timeout: float | None,
    out: Path | None,
    builder: str,
    consent: Consent,
) -> Feedback:
    """One board's run as feedback; a problem with this board's input is its own ``invalid`` result,
    so one misconfigured entry (or a real board without consent) does not hide the other boards' verdicts."""

    def invalid(*evidence: Evidence) -> Feedback:
        return Feedback(domain="firmware", task=f"hil:{board.id}", status=Status.INVALID, evidence=list(evidence))

    try:  # the consent gate, before anything is built or opened
        runner = board_runner(board.id, consent)
    except BenchError as exc:
        return invalid(*exc.evidence)

    app_path = app or (bench.resolve(board.app) if board.app else None)
    if app_path is None:
        return invalid(
            Evidence(code="E_INPUT", message=f"board {board.id!r} has no `app:`; pass --app", objects=[board.id])
        )
    patterns = tuple(expect or board.expect)
    if not patterns:
        return invalid(
            Evidence(
                code="E_INPUT",
                message=f"no console expectations for board {board.id!r}: pass --expect or set `expect:`",
                objects=[board.id],
            )
        )
    work_dir = (out or WORK_DIR) / board.id
    image, chosen, evidence, code = _image(app_path, target, builder, board, work_dir)
    if image is None or chosen is None:
        status = Status.FAIL if code == EXIT_FAIL else Status.INVALID
        return Feedback(domain="firmware", task=f"hil:{board.id}", status=status, evidence=evidence)
    if app_path.suffix.lower() in PLAN_SUFFIXES:
        output_dir = work_dir  # the artifact generated from the plan, as `rac-fw plan --run` does
    else:
        base = app_path if app_path.is_dir() else image.parent
        output_dir = out / board.id if out else base / "hil" / board.id
    request = RunRequest(
        image=image,
        target=chosen,
        expect=patterns,
        timeout_s=timeout or board.timeout,
        output_dir=output_dir,
        forbid=tuple(forbid or board.forbid),
    )
    result = runner.run(request)
    return Feedback(
        domain="firmware",
        task=f"hil:{board.id}",
        status=Status.PASS if result.ok else Status.FAIL,
        verdicts=result.verdicts,
        evidence=result.evidence,
    )


@hil_app.command()
def run(
    boards: Annotated[list[str] | None, typer.Argument(help="Board ids (default: every connected board).")] = None,
    bench_file: BenchOption = None,
    app: Annotated[Path | None, typer.Option("--app", help="ELF or artifact dir (default: bench `app:`).")] = None,
    target: Annotated[str | None, typer.Option("--target", help="Target of a bare ELF.")] = None,
    expect: Annotated[list[str] | None, typer.Option("--expect", help="Ordered console regex (repeat).")] = None,
    forbid: Annotated[list[str] | None, typer.Option("--forbid", help="Console regex that fails the run.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds for the expectations.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Per-board output root (default: .rac-fw/hil/ for plans).")
    ] = None,
    builder: Annotated[str, typer.Option("--builder", help="Builder for an artifact directory.")] = "auto",
    allow_flash: AllowFlashOption = False,
    as_json: JsonOption = False,
) -> None:
    """Flash (or emulate) and judge each board's console against ordered expectations."""
    bench = _bench(bench_file, as_json)
    chosen = [_board(bench, b, as_json) for b in boards] if boards else [b for b in bench.boards if b.connected]
    results = [
        _run_one(bench, board, app, target, expect or [], forbid or [], timeout, out, builder,
                 Consent(allow_flash, bench.path))
        for board in track(chosen, "bench run", quiet=as_json, label=lambda b: b.id)
    ]
    if as_json:
        console.print_json(json.dumps([json.loads(f.model_dump_json()) for f in results]))
    else:
        for feedback in results:
            emit_feedback(feedback, as_json=False)
    raise typer.Exit(max((exit_code_for(f) for f in results), default=EXIT_PASS))

