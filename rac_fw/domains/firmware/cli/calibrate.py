"""``rac-fw calibrate firmware``: every expressible suite task's reference plan through the pipeline."""

from __future__ import annotations

import typer
from rich.markup import escape

from rac_fw.console.output import console


def calibrate_firmware() -> None:
    """Every expressible firmware task's reference plan, model-free: pipeline, then the task's checks Φ."""
    from rac_fw.domains.firmware.tasks.calibrate import calibrate
    from rac_fw.domains.firmware.tasks.gaps import counts

    listed = counts()
    rows = []
    for r in calibrate():
        rows.append(r)
        mark = "[green]PASS[/]" if r.passed else "[red]FAIL[/]"
        console.print(f"{mark} {escape(r.task):<52} {r.seconds:6.2f} s  {escape(r.detail)}")
    passed = sum(r.passed for r in rows)
    console.print(f"suite: {listed['tasks']} tasks listed, {len(rows)} expressible, {listed['pending']} pending "
                  f"(statable, no reference yet), {listed['unexpressible']} unexpressible (rac-fw tasks firmware)")
    console.print(f"{passed} passed, {len(rows) - passed} failed")
    raise typer.Exit(0 if passed == len(rows) else 1)
