"""``rac-fw report``: write a self-contained HTML page with SVG figures for a plan, an artifact, a
scheduling task or a PCB task (see :mod:`rac_fw.report`).

Exit codes follow the protocol: 0 the reported work passes, 1 it fails verification (the page shows
why), 2 invalid input (no page when nothing could be drawn; an invalid plan still gets its page, with
its conflicts in red). An existing ``report.html`` is kept unless ``--force``.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rac_fw.console.output import EXIT_FAIL, EXIT_INVALID, EXIT_PASS, console, fail_with
from rac_fw.console.progress import progress
from rac_fw.contract import Evidence


class ReportDomain(StrEnum):
    firmware = "firmware"
    scheduling = "scheduling"
    pcb = "pcb"


def report(
    source: Annotated[
        str, typer.Argument(help="Plan file or generated artifact dir; a task id with --domain scheduling|pcb.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory to write report.html into.")],
    domain: Annotated[
        ReportDomain, typer.Option("--domain", help="Which domain SOURCE belongs to.")
    ] = ReportDomain.firmware,
    target: Annotated[str | None, typer.Option("--target", help="Retarget the plan (firmware).")] = None,
    framework: Annotated[str | None, typer.Option("--framework", help="Framework to lower with (firmware).")] = None,
    action: Annotated[
        Path | None, typer.Option("--action", help="Scheduling action (default: the model-free control) or PCB "
                                  "bundle (default: the task's own) file.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing report.html in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print {status, page, figures} as JSON.")] = False,
) -> None:
    """Draw a plan's memory map, DMA reach, pinout, DMA routes and verdicts, a schedule's Gantt chart or a board."""
    from rac_fw.report.page import PAGE_NAME, ReportError, artifact_page, plan_page, render, scheduling_page

    existing = out / PAGE_NAME
    if existing.exists() and not force:
        fail_with(
            [Evidence(code="E_FILE_EXISTS", location=str(existing),
                      message=f"{existing} exists; pass --force to replace it or pick another --out")],
            as_json=as_json,
        )  # fmt: skip
    path = Path(source)
    if domain is ReportDomain.firmware and not path.exists():
        fail_with([Evidence(code="E_FILE", message=f"no such plan or artifact: {source}", location=source)],
                  as_json=as_json)  # fmt: skip
    try:
        with progress(f"report {source}", quiet=as_json):
            if domain is ReportDomain.scheduling:
                page = scheduling_page(source, action)
            elif domain is ReportDomain.pcb:
                from rac_fw.report.pcb import pcb_page

                page = pcb_page(source, action)
            else:
                page = artifact_page(path) if path.is_dir() else plan_page(path, target, framework)
    except ReportError as exc:
        fail_with(exc.evidence, as_json=as_json)
    written = render(page, out)
    if as_json:
        console.print_json(
            json.dumps({"status": page.status, "page": str(written), "figures": [f[0] for f in page.figures]})
        )
    else:
        console.print(f"{page.status}: wrote {written} ({len(page.figures)} figures)")
    raise typer.Exit({"pass": EXIT_PASS, "fail": EXIT_FAIL}.get(page.status, EXIT_INVALID))
