"""Logic commands: ``rac-fw calibrate logic``."""

from __future__ import annotations

import typer

from rac_fw.console.output import console


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
