"""``rac-fw plan PLAN``: validate a firmware plan, lower it for a framework, verify the sources.

The command agents call. It prints the feedback (a table, or versioned JSON with ``--json``) and
exits 0 when the independent verifier passes the artifact, 1 when it (or a build/run) fails, 2 when
the plan is invalid for the target. ``--target`` retargets a plan written for another chip;
``--zephyr-version`` chooses the Zephyr release a Zephyr app is written for (``facts/sdk.yaml``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from rac_fw.console.options import LimitOption, configure_limits
from rac_fw.console.output import console, emit_feedback, fail_with
from rac_fw.contract import Evidence

_FRAMEWORKS = ("zephyr", "espidf", "hal", "baremetal")

#: Where ``--build``/``--run`` write the artifact when no ``--out`` is given.
DEFAULT_OUT = Path(".rac-fw") / "out"


def plan(
    plan_file: Annotated[Path, typer.Argument(metavar="PLAN", help="Plan file (YAML or JSON).")],
    target: Annotated[
        str | None, typer.Option("--target", "-t", help="Target id; retargets a plan written for another chip.")
    ] = None,
    framework: Annotated[
        str | None,
        typer.Option("--framework", "-f", help="zephyr, espidf, hal or baremetal (default: the target's first)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the generated project here (required for --build).")
    ] = None,
    build: Annotated[
        str | None,
        typer.Option("--build", help="Also compile: auto (also a bare --build), west, platformio, idf or gcc."),
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="Also run the image: qemu or board:ID (implies --build auto).")
    ] = None,
    bench: Annotated[
        Path | None, typer.Option("--bench", help="Bench file for --run board:ID (default hil/bench.yaml).")
    ] = None,
    zephyr_version: Annotated[str | None, typer.Option(
        "--zephyr-version", help="Zephyr release to write for: 4.1 (default) or 3.7; with --build, the west "
        "workspace's zephyr/VERSION when not given.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output (versioned JSON).")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Let --out overwrite files rac-fw did not write, or edited since it wrote them.")] = False,
    limit: LimitOption = None,
) -> None:
    """Validate → lower → verify a firmware plan (and optionally build and run it).

    ``--out`` never clobbers: the manifest records what rac-fw wrote, and a regeneration that would
    overwrite anything else (or a generated file edited since) is refused with the files listed.
    Keep your own code in ``user.c``/``user.h`` beside ``main.c``: created once, never rewritten.
    """
    configure_limits(limit, as_json)
    if framework is not None and framework not in _FRAMEWORKS:
        fail_with(
            [
                Evidence(
                    code="E_USAGE",
                    message=f"unknown framework {framework!r}; choose one of {', '.join(_FRAMEWORKS)}",
                    location="--framework",
                    objects=[framework],
                )
            ],
            as_json=as_json,
        )
    from rac_fw.domains.firmware.hil.board import runner_for  # imported here: keeps other commands fast
    from rac_fw.domains.firmware.pipeline import run_plan

    if out is None and (build is not None or run is not None):
        out = DEFAULT_OUT / f"{plan_file.stem}-{target or 'plan'}-{framework or 'default'}"
    if zephyr_version is None and (build is not None or run is not None):
        from rac_fw.domains.firmware.backends.west import workspace_version

        zephyr_version = workspace_version()
    try:
        result = run_plan(
            plan_file, target=target, framework=framework, out_dir=out, build=build, run=run, force=force,
            runners=functools.partial(runner_for, bench=bench), zephyr_version=zephyr_version,
        )
    except Exception as exc:  # a bug in a pipeline step must reach the agent as evidence, not a traceback
        frame = exc.__traceback__
        while frame is not None and frame.tb_next is not None:
            frame = frame.tb_next
        origin = f"{frame.tb_frame.f_code.co_filename}:{frame.tb_lineno}" if frame is not None else "rac-fw"
        fail_with(
            [
                Evidence(
                    code="E_INTERNAL",
                    message=f"rac-fw could not judge the plan ({type(exc).__name__}: {exc}); please report this",
                    location=origin,
                )
            ],
            as_json=as_json,
        )
    if as_json:
        console.print_json(json.dumps(result.to_json(), sort_keys=True))
    else:
        emit_feedback(result.feedback(), as_json=False)
        artifact = result.artifact()
        if artifact is not None:
            where = artifact["dir"] or "(not written: give --out DIR)"
            table = Table("file", "bytes", "sha256", title=f"{result.framework} artifact → {escape(str(where))}")
            for entry in artifact["files"]:
                table.add_row(escape(entry["path"]), str(entry["bytes"]), entry["sha256"][:16])
            console.print(table)
        if result.build is not None:
            failed = "[red]failed[/] (see evidence above)"
            outcome = escape(str(result.build["image"])) if result.build["ok"] else failed
            console.print(f"build: {escape(str(result.build['backend']))} → {outcome}")
            for region in result.build.get("memory", []):
                console.print(f"  {region['region']}: {region['used']} of {region['size']} bytes")
        if result.run is not None and result.run.get("output"):
            console.print(f"console ({escape(str(result.run['backend']))}):")
            for line in str(result.run["output"]).splitlines():
                console.print(f"  {escape(line)}")
    raise typer.Exit(result.exit_code)

