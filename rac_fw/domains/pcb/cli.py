"""PCB commands: ``rac-fw calibrate pcb`` and ``rac-fw pcb export TASK BUNDLE --out DIR``.

The generic ``observe``/``submit``/``replay`` commands already serve the pcb domain; these add the
model-free calibration run and the board export (``.kicad_pcb`` + SVG, optional KiCad DRC).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rac_fw.console.output import console, fail_with
from rac_fw.contract import Evidence
from rac_fw.documents import DocumentError, read_document
from rac_fw.domain import UnknownTask
from rac_fw.domains.pcb.import_cli import import_board, import_footprints

CATEGORIES = ("routing", "placement", "combined", "repair")

pcb_app = typer.Typer(help="PCB extras: export to KiCad and SVG, the robustness study, the KiCad importers.",
                      no_args_is_help=True)


def calibrate_pcb(
    category: Annotated[list[str] | None, typer.Option(help="Only these categories (repeatable).")] = None,
    suite: Annotated[str, typer.Option(help="quick (the 98 generated tasks), boards (real boards) or all.")] = "quick",
    task: Annotated[list[str] | None, typer.Option(help="Only these tasks (repeatable).")] = None,
    seed: int = 0,
) -> None:
    """Every task's reference bundle (repair tasks: fail → relaxation → pass) through the turn runtime;
    on real boards, the realized copper beside the designer's."""
    from rac_fw.domains.pcb.calibrate import RecordingDomain, calibrate
    from rac_fw.domains.pcb.tasks import suite as suite_of

    wanted = list(category or CATEGORIES)
    unknown = [c for c in wanted if c not in CATEGORIES]
    if unknown or suite not in ("quick", "boards", "all"):
        fail_with([Evidence(code="E_OPTION", location="--category/--suite", objects=unknown or [suite],
                            message=f"categories are {', '.join(CATEGORIES)}; suites are quick, boards, all")])
    tasks = suite_of(suite)
    missing = [n for n in task or [] if n not in tasks]
    if missing:
        fail_with([Evidence(code="E_UNKNOWN_TASK", location="--task", objects=missing,
                            message=f"{missing[0]!r} is not a task of suite {suite!r} (rac-fw tasks pcb)")])
    domain = RecordingDomain()
    names = [n for n, t in tasks.items() if t.category in wanted and (not task or n in task)]
    rows = []
    for row in calibrate(domain, names, seed):
        rows.append(row)
        mark = "[green]PASS[/]" if row.passed else "[red]FAIL[/]"
        human = tasks[row.task].baseline
        versus = ""
        if row.wirelength_mm is not None and human is not None:
            versus = (f"  copper {row.wirelength_mm:.0f} mm, {row.vias} vias (human {human['wirelength_mm']:.0f} mm, "
                      f"{human['vias']} vias)")
        console.print(f"{mark} {row.task:<20} {row.category:<10} realize {row.realize_s:6.2f} s{versus}  "
                      f"{escape(row.detail)}")
    passed = sum(r.passed for r in rows)
    for cat in wanted:
        mine = [r for r in rows if r.category == cat]
        if mine:
            times = sorted(r.realize_s for r in mine)
            console.print(f"{cat:<10} {sum(r.passed for r in mine)}/{len(mine)} pass, median realize "
                          f"{times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s")
    console.print(f"pass rate {passed / max(1, len(rows)):.1%}")
    console.print(f"{passed} passed, {len(rows) - passed} failed")
    raise typer.Exit(0 if passed == len(rows) else 1)


def export(
    task: Annotated[str, typer.Argument(help="A pcb task (rac-fw tasks pcb).")],
    bundle: Annotated[Path, typer.Argument(help="The relation bundle, JSON or YAML.")],
    out: Annotated[Path, typer.Option(help="Directory for TASK.kicad_pcb and TASK.svg.")] = Path("."),
    seed: int = 0,
    force: Annotated[bool, typer.Option(help="Overwrite existing files.")] = False,
    kicad_drc: Annotated[bool, typer.Option(help="Also run KiCad's own DRC (needs KiCad's pcbnew module).")] = False,
) -> None:
    """Realize BUNDLE on TASK, verify it, and write the board as .kicad_pcb (+ .kicad_pro rules) and .svg."""
    from rac_fw.contract import Action
    from rac_fw.domains.pcb import kicad
    from rac_fw.domains.pcb.domain import PcbDomain
    from rac_fw.domains.pcb.export import kicad_pcb, svg
    from rac_fw.domains.pcb.tasks import get_task

    domain = PcbDomain()
    try:
        t = get_task(task)
    except UnknownTask as exc:
        fail_with([Evidence(code="E_UNKNOWN_TASK", message=str(exc), location="TASK", objects=[task])])
    try:
        payload = read_document(bundle, what="bundle")
    except DocumentError as exc:
        fail_with(exc.evidence)
    if not isinstance(payload, dict):
        fail_with([Evidence(code="E_SCHEMA", message="the bundle must hold a mapping", location=str(bundle))])
    validation = domain.validate(task, Action(domain="pcb", task=task, payload=payload))
    if not validation.ok:
        fail_with(validation.evidence)
    targets = [out / f"{task}.kicad_pcb", out / f"{task}.svg", out / f"{task}.kicad_pro"]
    existing = [p for p in targets if p.exists()]
    if existing and not force:
        fail_with([Evidence(code="E_FILE_EXISTS", location=str(existing[0]),
                            message=f"{existing[0]} exists; pass --force to overwrite it")])
    if kicad_drc and not kicad.available():
        fail_with([Evidence(code="E_TOOL_MISSING", location="--kicad-drc",
                            message="KiCad's pcbnew module is not importable (Debian: apt-get install kicad)")])
    realization = domain.realize(task, validation.action, seed)
    verification = domain.verify(task, validation.action, realization)
    try:
        out.mkdir(parents=True, exist_ok=True)
        targets[0].write_text(kicad_pcb(t, realization.artifact), encoding="utf-8")
        targets[1].write_text(svg(t, realization.artifact), encoding="utf-8")
        targets[2].write_text(kicad.project(t.board.rules, task, t.smallest_hole), encoding="utf-8")
    except OSError as exc:
        fail_with([Evidence(code="E_FILE", message=f"cannot write to {out}: {exc.strerror or exc}",
                            location=str(out))])
    failed = [v for v in verification.verdicts if not v.passed]
    console.print(f"wrote {', '.join(str(p) for p in targets)}")
    console.print(f"project DRC and relations: {len(verification.verdicts) - len(failed)} of "
                  f"{len(verification.verdicts)} predicates hold")
    for v in failed:
        console.print(f"  [red]✘[/] {escape(v.predicate)}: {escape(v.detail or '')}")
    code = 0 if not failed else 1
    if kicad_drc:
        report = kicad.run_drc(targets[0], routed=t.route, placed={c.ref for c in t.components if c.fixed})
        console.print(f"KiCad DRC: {report.violations} violation(s), {report.unconnected} unconnected item(s)"
                      + (f"; {report.unrouted_by_design} unrouted by design (a placement board is not routed)"
                         if report.unrouted_by_design else "")
                      + (f"; {report.given} among parts the task placed (given)" if report.given else ""))
        for line in report.details[:10]:
            console.print(f"  {escape(line)}")
        code = code or int(report.violations + report.unconnected > 0)
    raise typer.Exit(code)


def robustness(
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0,1,2",
    family: Annotated[list[str] | None, typer.Option(help="Only these placement families (repeatable).")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
) -> None:
    """Board shrink/expand and footprint shrink: relational re-solve against coordinate baselines."""
    from rac_fw.domains.pcb.robustness import METHODS, PERTURBATIONS, bootstrap, study
    from rac_fw.domains.pcb.tasks import all_tasks

    try:
        seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        fail_with([Evidence(code="E_OPTION", location="--seeds", message=f"--seeds must be integers, got {seeds!r}")])
    placement = {n: t for n, t in all_tasks().items() if t.category == "placement"}
    known = sorted({t.family for t in placement.values()})
    bad = [f for f in family or [] if f not in known]
    if bad or not seed_list or resamples < 10:
        fail_with([Evidence(code="E_OPTION", location="--family/--seeds/--resamples", objects=bad,
                            message=f"families are {', '.join(known)}; give ≥ 1 seed and ≥ 10 resamples")])
    names = [n for n, t in placement.items() if not family or t.family in family]
    cases = study(names, seed_list)
    console.print(f"{len(names)} placement tasks × seeds {seed_list} × {len(PERTURBATIONS)} perturbations "
                  "(tasks whose reference fails on a seed are left out for that seed)")
    console.print(f"{'method':<15}" + "".join(f" {p:>35}" for p in PERTURBATIONS) + f" {'overall':>35}")
    for method in METHODS:
        cells = []
        for pert in [*PERTURBATIONS, None]:
            mine = [c for c in cases if c.method == method and (pert is None or c.perturbation == pert)]
            rate, lo, hi = bootstrap(mine, resamples)
            adapt = sum(c.held for c in mine) / max(1, sum(c.relations for c in mine))
            cells.append(f"{rate:6.1%} [{lo:6.1%}, {hi:6.1%}] adapt {adapt:6.1%}")
        console.print(f"{method:<15}" + "".join(f" {c:>35}" for c in cells))
    rel = [c for c in cases if c.method == "relational"]
    console.print(f"{sum(c.clean for c in rel)} passed, {len(rel) - sum(c.clean for c in rel)} failed "
                  "(relational re-solve)")


pcb_app.command("export")(export)
pcb_app.command("robustness")(robustness)
pcb_app.command("import-footprints")(import_footprints)
pcb_app.command("import-board")(import_board)
