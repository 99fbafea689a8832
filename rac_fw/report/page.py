"""Build the report pages: gather what rac-fw already decided, hand it to the figures, render HTML.

The firmware page reads the pipeline (:func:`~rac_fw.domains.firmware.pipeline.run_plan`: verdicts and
evidence), the target's facts, :func:`~rac_fw.domains.firmware.placement.placement` /
``buffer_needs`` / ``transfers`` (where each buffer lives, who moves it, on which channel) and the pin
claims the pin obligations judge (:func:`~rac_fw.domains.firmware.obligations.refs.claims`); a pin is
red when the evidence names it, and its cell names every claim on it. An invalid plan's summary lists
each violation (verification did not run). The scheduling page runs the domain's own validate →
realize → verify turn and draws the verified start times with the action's hard pairs; the PCB page
(:mod:`.pcb`) does the same for a board. No rule is re-derived here.

A page is one self-contained HTML file (inline SVG and CSS, nothing fetched) written into ``--out``;
an existing ``report.html`` there is never overwritten silently: the caller chooses the directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from rac_fw.contract import Evidence, Verdict
from rac_fw.report import figures
from rac_fw.report.figures import Bar, GanttMarks, PinCell, RegionBox, Route

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import DmaController, Target

PAGE_NAME = "report.html"
D = TypeVar("D")


class ReportError(Exception):
    """The report cannot be made; ``evidence`` says why (located, with a stable code)."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(f"{e.code}: {e.message}" for e in evidence))


@dataclass
class Page:
    """What a report page shows: a title, key facts, figures (id → SVG) and the verification summary."""

    title: str
    status: str
    facts: list[tuple[str, str]]
    figures: list[tuple[str, str, str]] = field(default_factory=list)
    """(id, caption, svg)."""
    verdicts: list[Verdict] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    tables: list[tuple[str, str, list[str], list[list[str]]]] = field(default_factory=list)
    """(id, caption, header, rows): data a figure cannot hold (a board's relations and measured values)."""


TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ page.title }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
.status { display: inline-block; padding: 2px 10px; border-radius: 4px; color: white; }
.pass { background: #2e7d32; } .fail { background: #c62828; } .invalid { background: #ef6c00; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ccc; padding: 3px 8px;
text-align: left; vertical-align: top; } .ok { color: #2e7d32; } .bad { color: #c62828; font-weight: bold; }
figure.svgfig { margin: 12px 0; } figure.svgfig svg { max-width: 100%; height: auto; }
figcaption { font-size: 13px; color: #555; }
</style></head><body>
<h1>{{ page.title }} <span class="status {{ page.status }}">{{ page.status }}</span></h1>
<table>{% for key, value in page.facts %}<tr><th>{{ key }}</th><td>{{ value }}</td></tr>{% endfor %}</table>
{% for id, caption, svg in page.figures %}
<h2>{{ caption }}</h2>
<figure class="svgfig" id="{{ id }}">{{ svg }}<figcaption>{{ caption }}</figcaption></figure>
{% endfor %}
{% for id, caption, header, rows in page.tables %}
<h2>{{ caption }}</h2>
<table id="{{ id }}"><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in rows %}<tr>{% for cell in row %}
<td class="{{ {'✗': 'bad', '✓': 'ok'}.get(cell, '') }}">{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</table>
{% endfor %}
<h2>Verification summary</h2>
<table><tr><th></th><th>predicate</th><th>measured</th><th>limit</th><th>detail</th></tr>
{% for v in page.verdicts %}<tr><td class="{{ 'ok' if v.passed else 'bad' }}">{{ '✓' if v.passed else '✗' }}</td>
<td>{{ v.predicate }}</td><td>{{ v.measured if v.measured is not none else '' }}</td>
<td>{{ v.limit if v.limit is not none else '' }}</td><td>{{ v.detail or '' }}</td></tr>{% endfor %}
</table>
{% if page.evidence %}<h2>Evidence</h2>
<table><tr><th>code</th><th>message</th><th>where</th><th>repairs</th></tr>
{% for e in page.evidence %}<tr><td class="bad">{{ e.code }}</td><td>{{ e.message }}</td>
<td>{{ e.location or '' }}</td><td>{% for r in e.relaxations %}{{ r.description }}<br>{% endfor %}</td></tr>
{% endfor %}</table>{% endif %}
<script>
// Figure boxes for headless checks (the test compares them with the screenshot); no effect on the page.
document.querySelectorAll("figure.svgfig").forEach(function (f) {
  var r = f.querySelector("svg").getBoundingClientRect();
  f.setAttribute("data-box", JSON.stringify([r.left + scrollX, r.top + scrollY, r.width, r.height]));
});
</script>
</body></html>
"""


def render(page: Page, out_dir: Path) -> Path:
    """Write ``page`` as ``out_dir/report.html`` (created if needed) and return its path."""
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    figures_markup = [(fid, caption, Markup(svg)) for fid, caption, svg in page.figures]
    text = env.from_string(TEMPLATE).render(page=Page(**{**page.__dict__, "figures": figures_markup}))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / PAGE_NAME
    path.write_text(text, encoding="utf-8")
    return path


def installed(name: str, kind: type[D]) -> D:
    """The registered domain ``name`` (of the class the page draws), or the located reason it is not
    installed here (its extra missing)."""
    from rac_fw.domain import DomainUnavailable, UnknownDomain, load_domain

    try:
        domain = load_domain(name)
    except (DomainUnavailable, UnknownDomain) as exc:
        raise ReportError([Evidence(code="E_NOT_INSTALLED", message=str(exc), location="--domain",
                                    objects=[name])]) from None
    if not isinstance(domain, kind):
        raise ReportError([Evidence(code="E_NOT_INSTALLED", location="--domain", objects=[name],
                                    message=f"the domain registered as {name!r} is not {kind.__name__}")])
    return domain


# --- firmware ---------------------------------------------------------------------------------------


def _mentions(evidence: list[Evidence], name: str) -> list[Evidence]:
    return [e for e in evidence if name in e.objects]


def _regions(facts: Target, placed: dict[str, str], sizes: dict[str, int]) -> list[RegionBox]:
    by_region: dict[str, list[tuple[str, int]]] = {}
    for name, region in placed.items():
        by_region.setdefault(region, []).append((name, sizes.get(name, 0)))
    return [
        RegionBox(r.name, r.address, r.size, r.kind, r.cacheable, tuple(r.reachable_by),
                  tuple(by_region.get(r.name, ())))
        for r in facts.memory
    ]  # fmt: skip


def _pins(facts: Target, claimed: dict[str, list[str]], evidence: list[Evidence]) -> list[PinCell]:
    """Every pin: claimed (what the plan uses it for), reserved (chip or board use), free; red where
    evidence names the pin, labelled with every claim on it (and the board's use) and the evidence in
    its tooltip. ``claimed`` maps pin → "owner: signal" of each claim, in plan order."""
    from rac_fw.domains.firmware.facts.observe import board_usage

    board = board_usage(facts)
    cells = []
    for name, pin in facts.pins.items():
        against = _mentions(evidence, name)
        detail = " ".join(e.message for e in against)
        uses = list(claimed.get(name, []))
        board_use = board.get(name) or pin.reserved or ""
        if against:
            label = " ✕ ".join([*uses, *([f"board: {board_use}"] if board_use and len(uses) < 2 else [])])
            cells.append(PinCell(name, "conflict", label or board_use, detail))
        elif uses:
            cells.append(PinCell(name, "claimed", " + ".join(uses)))
        elif board_use:
            cells.append(PinCell(name, "reserved", board_use))
        else:
            cells.append(PinCell(name, "free", ""))
    # An unknown pin is still drawn, in red, with its evidence in the table below.
    cells += [PinCell(name, "conflict", " ✕ ".join(uses), " ".join(e.message for e in _mentions(evidence, name)))
              for name, uses in claimed.items() if name not in facts.pins]
    return cells


def _violations(evidence: list[Evidence]) -> list[Verdict]:
    """The summary rows of an invalid plan: one failed check per violation (with its magnitude), then
    the verification that could not run."""
    rows = []
    for e in evidence:
        first = e.magnitudes[0] if e.magnitudes else None
        rows.append(Verdict(predicate=f"plan valid: {e.code}", passed=False, detail=e.message,
                            measured=first.value if first else None, unit=first.unit if first else None))
    rows.append(Verdict(predicate="independent verification", passed=False,
                        detail="not run: the plan is invalid (each violation above carries its repairs)"))
    return rows


def _channel(facts: Target, controller: DmaController, request: str | None) -> str:
    """Where a transfer runs on its controller: the fixed stream/channel of its request, the request
    multiplexer's line, or (memory to memory) any free stream."""
    from rac_fw.domains.firmware.facts.query import dmamux_line

    if request is None:
        return "any free stream"
    fixed = controller.routes(request)
    if fixed:
        stream, channel = fixed[0]
        return f"stream {stream} · channel {channel}"
    line = dmamux_line(facts, request)
    if line is not None:
        return f"{line.mux} line {line.line} · any stream"
    return "the peripheral's own DMA" if controller.channels == 0 else "any free stream"


def _facts_rows(facts: Target, framework: str) -> list[tuple[str, str]]:
    dcache = facts.core.dcache
    return [
        ("target", f"{facts.id} ({facts.name}, {facts.board.vendor_name or facts.board.name})"),
        ("framework", framework),
        ("core", f"{facts.core.name}, D-cache {f'{dcache.line_bytes}-byte lines' if dcache else 'none'}"),
    ]


def plan_page(source: Path, target: str | None = None, framework: str | None = None) -> Page:
    """The firmware report for a plan file: the pipeline's verdicts and the plan's placements, pins and
    DMA routes on the target."""
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.obligations.refs import claims
    from rac_fw.domains.firmware.pipeline import run_plan
    from rac_fw.domains.firmware.placement import buffer_needs, placement, transfers
    from rac_fw.domains.firmware.plan.load import PlanError, load_plan

    try:
        plan = load_plan(source)
    except PlanError as exc:
        raise ReportError(exc.evidence) from None
    result = run_plan(source, target=target, framework=framework)
    if result.target is None:
        raise ReportError(result.evidence)
    try:
        facts = load_target(result.target)
    except LookupError as exc:
        raise ReportError([Evidence(code="E_UNKNOWN_TARGET", message=str(exc), location="--target")]) from None
    chosen = result.framework or facts.frameworks[0]
    evidence = result.evidence
    placed = placement(plan, facts)
    sizes = {b.name: b.size_bytes for b in plan.resources.buffers}
    regions = _regions(facts, placed, sizes)
    claimed: dict[str, list[str]] = {}
    for claim in claims(plan, facts):
        use = f"{claim.owner}: {claim.signal}"
        if use not in claimed.setdefault(claim.pin, []):
            claimed[claim.pin].append(use)
    routes = []
    for transfer in transfers(plan, facts):
        if transfer.controller is None:
            continue
        where = placed.get(transfer.sink) or placed.get(transfer.source) or "unplaced"
        needs = buffer_needs(plan, facts, chosen, transfer.sink)
        if needs is not None:
            care = "clean/invalidate" if needs.cache_maintenance else "no cache care"
            where += f", align {needs.alignment_bytes} B, {care}"
        routes.append(Route(transfer.direction, transfer.source, transfer.controller.name,
                            _channel(facts, transfer.controller, transfer.request), transfer.request, transfer.sink,
                            where))
    page = Page(
        title=f"rac-fw report: {source.name} on {facts.id}",
        status=result.status.value,
        facts=[("plan", str(source)), *_facts_rows(facts, chosen),
               ("placement", ", ".join(f"{b} → {r}" for b, r in placed.items()) or "no buffers")],
        verdicts=result.verdicts or (_violations(evidence) if result.status.value == "invalid" else []),
        evidence=evidence,
    )  # fmt: skip
    page.figures = [
        ("memory-map", "Memory map", figures.memory_map(regions)),
        ("dma-reach", "DMA reach and cache state", figures.dma_reach(regions, [m.name for m in facts.bus_masters])),
        ("pinout", "Pinout", figures.pinout(_pins(facts, claimed, evidence))),
    ]
    if routes:  # a plan that moves nothing by DMA gets a line in the facts, not an empty figure
        page.figures.append(("dma-routes", "DMA routes", figures.dma_routes(routes)))
    else:
        page.facts.append(("DMA routes", "none: the plan moves no data by DMA"))
    return page


def artifact_page(artifact: Path) -> Page:
    """The firmware report for a generated artifact directory: the independent source verifier's
    verdicts over its files, and the target's memory map, DMA reach and board pin use (the manifest
    records no plan, so there are no plan placements or claims to draw: report the plan for those)."""
    from rac_fw.domains.firmware.backends import BackendError, read_manifest
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.verify.artifact import verify_sources

    try:
        manifest = read_manifest(artifact)
        facts = load_target(str(manifest["target"]))
    except BackendError as exc:
        raise ReportError(exc.evidence) from None
    except (KeyError, LookupError) as exc:
        raise ReportError(
            [Evidence(code="E_MANIFEST", message=f"{artifact}: unusable manifest ({exc})", location=str(artifact))]
        ) from None
    framework = str(manifest.get("framework"))
    files = {}
    listed = manifest.get("files", [])
    for entry in listed if isinstance(listed, list) else []:
        path = artifact / str(entry["path"])
        if path.is_file():
            files[str(entry["path"])] = path.read_text(encoding="utf-8", errors="replace")
    verification = verify_sources(files, framework, facts)
    regions = _regions(facts, {}, {})
    page = Page(
        title=f"rac-fw report: artifact {artifact.name} on {facts.id}",
        status="pass" if verification.ok else "fail",
        facts=[("artifact", str(artifact)), *_facts_rows(facts, framework), ("files", str(len(files)))],
        verdicts=verification.verdicts,
        evidence=verification.evidence,
    )
    page.figures = [
        ("memory-map", "Memory map", figures.memory_map(regions)),
        ("dma-reach", "DMA reach and cache state", figures.dma_reach(regions, [m.name for m in facts.bus_masters])),
        ("pinout", "Pinout (board use)", figures.pinout(_pins(facts, {}, verification.evidence))),
    ]
    return page


# --- scheduling -------------------------------------------------------------------------------------


def scheduling_page(task: str, action: Path | None = None, backend: str = "bounded") -> Page:
    """The scheduling report: the domain's own turn on ``task`` (the given action, else the model-free
    control the calibration uses) and the Gantt chart of the verified schedule."""
    from rac_fw.contract import Action
    from rac_fw.domain import UnknownTask
    from rac_fw.domains.scheduling.calibrate import control_payload
    from rac_fw.domains.scheduling.domain import SchedulingDomain
    from rac_fw.domains.scheduling.instance import known_optimum

    domain = installed("scheduling", SchedulingDomain)
    try:
        inst = domain.instance(task)
    except UnknownTask as exc:
        raise ReportError([Evidence(code="E_UNKNOWN_TASK", message=str(exc), location=task)]) from None
    if action is None:
        payload: dict[str, Any] = control_payload(inst.num_jobs, backend)
        described = f"model-free control (jobs in input order, backend {backend})"
    else:
        try:
            import yaml

            payload = yaml.safe_load(action.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ReportError(
                [Evidence(code="E_FILE", message=f"cannot read {action}: {exc}", location=str(action))]
            ) from None
        described = str(action)
    validation = domain.validate(task, Action(domain=domain.name, task=task, payload=payload))
    if not validation.ok:
        raise ReportError(validation.evidence)
    realization = domain.realize(task, validation.action, 0)
    verification = domain.verify(task, validation.action, realization)
    optimum = known_optimum(task)
    page = Page(
        title=f"rac-fw report: scheduling {task}",
        status="pass" if verification.ok else "fail",
        facts=[
            ("task", f"{task}: {inst.num_jobs} jobs × {inst.num_machines} machines"),
            ("action", described),
            ("backend", verification.backend),
            ("makespan", f"{verification.makespan} (optimum {optimum})" if optimum else str(verification.makespan)),
        ],
        verdicts=verification.verdicts,
        evidence=verification.evidence,
    )
    if verification.starts is not None and verification.makespan is not None:
        bars = [
            Bar(op.machine, op.job, verification.starts[op.name], verification.starts[op.name] + op.duration, op.name)
            for op in inst.operations
        ]
        marks = GanttMarks(optimum, [(a, b) for a, b in validation.action.before] if validation.action else [])
        page.figures = [("gantt", "Gantt chart", figures.gantt(bars, inst.num_machines, verification.makespan, marks))]
    return page
