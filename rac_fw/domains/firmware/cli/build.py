"""``rac-fw build ARTIFACT_DIR``: compile a generated source tree with west, PlatformIO, idf.py or gcc.

The artifact's manifest says which framework and target it was generated for; ``--builder auto`` picks
the first builder present on this machine for that framework. A missing SDK is a failure with the
exact install step (exit 1), never a traceback; an unusable artifact or builder name is exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rac_fw.console.output import EXIT_FAIL, EXIT_PASS, console, err_console, fail_with
from rac_fw.console.progress import progress
from rac_fw.domains.firmware.backends import BackendError, BuildResult, build_artifact


def build(
    artifact_dir: Annotated[Path, typer.Argument(help="Directory written by `rac-fw plan … --out DIR`.")],
    builder: Annotated[str, typer.Option("--builder", "-b", help="auto, west, platformio, idf or gcc.")] = "auto",
    board: Annotated[
        str | None,
        typer.Option("--board", help="Override the builder's board, e.g. native_sim/native/64."),
    ] = None,
    build_dir: Annotated[Path | None, typer.Option("--build-dir", help="Default: ARTIFACT_DIR/build.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before the build is killed.")] = 900.0,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Build a generated artifact directory."""
    try:
        with progress(f"building {artifact_dir}", quiet=as_json):
            result = build_artifact(artifact_dir, builder, build_dir, board, timeout)
    except BackendError as exc:
        if not all(e.code == "E_TOOL_MISSING" for e in exc.evidence):
            fail_with(exc.evidence, as_json=as_json)
        # `auto` found no builder installed: the input is fine, this machine lacks a tool (exit 1).
        result = BuildResult(backend=builder, ok=False, build_dir=build_dir or artifact_dir, evidence=exc.evidence)
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "status": "pass" if result.ok else "fail",
                    "backend": result.backend,
                    "command": result.command,
                    "image": str(result.image) if result.image else None,
                    "log": str(result.log) if result.log else None,
                    "evidence": [e.model_dump(mode="json") for e in result.evidence],
                }
            )
        )
    elif result.ok:
        console.print(f"[green]built[/] with {result.backend}: {escape(str(result.image))}")
        console.print(f"  $ {escape(' '.join(result.command))}")
    else:
        err_console.print(f"[red]build failed[/] ({result.backend})")
        for ev in result.evidence:
            err_console.print(f"  {ev.code}: {escape(ev.message)}")
    raise typer.Exit(EXIT_PASS if result.ok else EXIT_FAIL)

