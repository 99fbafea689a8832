"""Shared CLI plumbing: reading action/plan files with located errors, printing feedback, exit codes.

Exit codes are part of the protocol: 0 clean pass, 1 verified failure with evidence, 2 invalid input.
"""

from __future__ import annotations

import json
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rac_fw.contract import Evidence, Feedback, Status

EXIT_PASS, EXIT_FAIL, EXIT_INVALID = 0, 1, 2

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def fail_with(evidence: list[Evidence], exit_code: int = EXIT_INVALID, as_json: bool = False) -> NoReturn:
    """Print evidence (JSON or human) and exit with the given code."""
    if as_json:
        console.print_json(json.dumps({"status": "invalid", "evidence": [e.model_dump(mode="json") for e in evidence]}))
    else:
        for ev in evidence:
            where = escape(f" [{ev.location}]") if ev.location else ""
            err_console.print(f"[bold red]error[/] {ev.code}{where}: {escape(ev.message)}")
            for relax in ev.relaxations:
                err_console.print(f"  try: {escape(relax.description)}")
    raise typer.Exit(exit_code)


def exit_code_for(feedback: Feedback) -> int:
    return {Status.PASS: EXIT_PASS, Status.FAIL: EXIT_FAIL}.get(feedback.status, EXIT_INVALID)


def emit_feedback(feedback: Feedback, as_json: bool) -> None:
    """Print feedback: versioned JSON for programs, a rich table for people."""
    if as_json:
        console.print_json(feedback.model_dump_json())
        return
    head = f"[bold]{feedback.domain}[/] {escape(feedback.task)} — turn {feedback.turn}"
    console.print(f"{head}: [bold]{feedback.status.value}[/]")
    if feedback.verdicts:
        table = Table("predicate", "ok", "measured", "limit", "detail")
        for v in feedback.verdicts:
            measured, limit = ("" if x is None else f"{x}" for x in (v.measured, v.limit))
            if v.unit and isinstance(v.measured, int | float):
                measured += f" {v.unit}"
            if v.unit and isinstance(v.limit, int | float):
                limit += f" {v.unit}"
            table.add_row(escape(v.predicate), "✔" if v.passed else "✘", escape(measured), escape(limit),
                          escape(v.detail or ""))
        console.print(table)
    for ev in feedback.evidence:
        where = escape(f" [{ev.location}]") if ev.location else ""
        console.print(f"[red]{ev.code}[/]{where}: {escape(ev.message)}")
        if ev.objects:
            console.print(f"  objects: {escape(', '.join(ev.objects))}")
        for mag in ev.magnitudes:
            console.print(f"  {escape(mag.name)}: {mag.value} {escape(mag.unit)}")
        for relax in ev.relaxations:
            console.print(f"  try: {escape(relax.description)}")
    if feedback.artifact_hash:
        console.print(f"artifact sha256 {feedback.artifact_hash}")
