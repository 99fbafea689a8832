"""``rac-fw calibrate <domain>``: run a domain's calibration and print one line per check.

The last line is ``N passed, M failed``; the exit code is 0 only when every check behaved as expected.
Other domains add their own command to ``calibrate_app`` from their CLI module.
"""

from __future__ import annotations

import typer
from rich.markup import escape

from rac_fw.cli.output import console

calibrate_app = typer.Typer(help="Check that each domain's verifier accepts right and rejects wrong.",
                            no_args_is_help=True)


@calibrate_app.command("logic")
def calibrate_logic() -> None:
    """Four checks per logic design: correct, one-row change, forged artifact, repair trace."""
    from rac_fw.domains.logic.calibrate import calibrate

    results = calibrate()
    for r in results:
        mark = "[green]PASS[/]" if r.ok else "[red]FAIL[/]"
        console.print(f"{mark} {r.design:<18} {r.check:<28} {r.detail}")
    passed = sum(r.ok for r in results)
    console.print(f"{passed} passed, {len(results) - passed} failed")
    raise typer.Exit(0 if passed == len(results) else 1)


@calibrate_app.command("firmware")
def calibrate_firmware() -> None:
    """Every expressible firmware task's reference plan, model-free: pipeline, then the task's checks Φ."""
    from rac_fw.domains.firmware.tasks import suite
    from rac_fw.domains.firmware.tasks.calibrate import calibrate

    listed = suite()
    rows = []
    for r in calibrate():
        rows.append(r)
        mark = "[green]PASS[/]" if r.passed else "[red]FAIL[/]"
        console.print(f"{mark} {escape(r.task):<52} {r.seconds:6.2f} s  {escape(r.detail)}")
    passed = sum(r.passed for r in rows)
    unexpressible = len(listed) - len(rows)
    console.print(f"suite: {len(listed)} tasks listed, {len(rows)} expressible, {unexpressible} unexpressible "
                  "(rac-fw tasks firmware)")
    console.print(f"{passed} passed, {len(rows) - passed} failed")
    raise typer.Exit(0 if passed == len(rows) else 1)


def register(app: typer.Typer) -> None:
    app.add_typer(calibrate_app, name="calibrate")
