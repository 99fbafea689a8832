"""Scheduling commands: ``rac-fw calibrate scheduling`` and ``rac-fw scheduling code TASK FILE.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rac_fw.console.output import EXIT_INVALID, console, emit_feedback, exit_code_for, fail_with
from rac_fw.contract import Evidence
from rac_fw.domain import UnknownTask
from rac_fw.domains.scheduling.backends import BACKENDS

scheduling_app = typer.Typer(help="Job-shop scheduling extras: the Code baseline.", no_args_is_help=True)


def _check_options(backend: str, time_limit: float, workers: int) -> None:
    problems = []
    if backend not in BACKENDS:
        problems.append(Evidence(code="E_OPTION", location="--backend", objects=[backend],
                                 message=f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}"))
    if not time_limit > 0:
        problems.append(Evidence(code="E_OPTION", location="--time-limit",
                                 message=f"--time-limit must be > 0 seconds, got {time_limit}"))
    if workers < 1:
        problems.append(Evidence(code="E_OPTION", location="--workers",
                                 message=f"--workers must be ≥ 1, got {workers}"))
    if problems:
        fail_with(problems, EXIT_INVALID)


def calibrate_scheduling(
    backend: Annotated[str, typer.Option(help="bounded (tabu search) or cpsat (OR-Tools CP-SAT).")] = "bounded",
    time_limit: Annotated[float, typer.Option(help="CP-SAT time limit per instance, seconds.")] = 10.0,
    workers: Annotated[int, typer.Option(help="CP-SAT worker threads.")] = 2,
) -> None:
    """Model-free calibration on LA01–LA40; ends with 'N passed, M failed'.

    The control action (input job order, no relations) on every Lawrence instance: makespan, gap to the
    published optimum, time per instance."""
    _check_options(backend, time_limit, workers)
    from rac_fw.domains.scheduling.calibrate import QUALITY_THRESHOLD, calibrate, warm_up
    from rac_fw.domains.scheduling.domain import SchedulingDomain

    domain = SchedulingDomain(time_limit=time_limit, workers=workers)
    if backend == "bounded":
        console.print(f"warm-up (load/compile kernels): {warm_up(domain, backend):.2f} s")
    console.print(f"{'task':<6}{'makespan':>10}{'optimum':>9}{'gap':>9}{'time s':>9}  quality")
    rows = []
    for row in calibrate(domain, backend):
        rows.append(row)
        gap = "invalid" if row.gap is None else f"{row.gap:.2%}"
        mark = "[green]ok[/]" if row.passed else f"[red]> {QUALITY_THRESHOLD}× optimum[/]"
        console.print(f"{row.task:<6}{row.makespan or '-':>10}{row.optimum:>9}{gap:>9}{row.seconds:>9.3f}  {mark}")
    passed = sum(r.passed for r in rows)
    gaps = [r.gap for r in rows if r.gap is not None]
    mean_gap = sum(gaps) / len(gaps) if gaps else float("nan")
    console.print(f"backend {backend}: quality-pass (≤ {QUALITY_THRESHOLD}× optimum) {passed}/{len(rows)}, "
                  f"mean gap {mean_gap:.2%}, at optimum {sum(r.optimal for r in rows)}/{len(rows)}, "
                  f"max time {max(r.seconds for r in rows):.3f} s, total {sum(r.seconds for r in rows):.2f} s")
    console.print(f"{passed} passed, {len(rows) - passed} failed")
    raise typer.Exit(0 if passed == len(rows) else 1)


def code(
    task: Annotated[str, typer.Argument(help="la01..la40, or a path to a JSPLIB/Taillard instance file.")],
    program: Annotated[Path, typer.Argument(help="The agent's Python program (reads the instance on stdin).")],
    wall_s: Annotated[float, typer.Option("--time-limit", help="Wall-clock limit for the program, s.")] = 10.0,
    memory_mb: Annotated[int, typer.Option("--memory", help="Address-space limit, MiB.")] = 512,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output (versioned JSON).")] = False,
) -> None:
    """Code baseline: run PROGRAM sandboxed on TASK and judge what it prints with the scheduling verifier."""
    from rac_fw.domains.scheduling.code import run_code
    from rac_fw.domains.scheduling.domain import SchedulingDomain
    from rac_fw.domains.scheduling.sandbox import Limits

    domain = SchedulingDomain()
    try:
        domain.instance(task)
    except UnknownTask as exc:
        fail_with([Evidence(code="E_UNKNOWN_TASK", message=str(exc), location="TASK", objects=[task])],
                  as_json=as_json)
    try:
        source = program.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail_with([Evidence(code="E_FILE", message=f"cannot read program {program}: {exc}", location=str(program))],
                  as_json=as_json)
    if not wall_s > 0 or memory_mb < 64:
        fail_with([Evidence(code="E_OPTION", location="--time-limit/--memory",
                            message="--time-limit must be > 0 s and --memory ≥ 64 MiB")], as_json=as_json)
    limits = Limits(wall_s=wall_s, cpu_s=max(1, int(wall_s + 0.999)), memory_mb=memory_mb)
    feedback = run_code(domain, task, source, limits)
    emit_feedback(feedback, as_json)
    raise typer.Exit(exit_code_for(feedback))


scheduling_app.command("code")(code)
