"""Build the report pages: gather what rac-fw already decided, hand it to the figures, render HTML.

The firmware page reads the pipeline (:func:`~rac_fw.domains.firmware.pipeline.run_plan`: verdicts and
evidence), the target's facts, :func:`~rac_fw.domains.firmware.placement.placement` /
``buffer_needs`` / ``buffer_controller`` (where each buffer lives and who moves it) and the pin claims
the pin obligations judge (:func:`~rac_fw.domains.firmware.obligations.refs.claims`); a pin is red when
the verdicts carry evidence naming it. The scheduling page runs the domain's own validate → realize →
verify turn and draws the verified start times. No rule is re-derived here.

A page is one self-contained HTML file (inline SVG and CSS, nothing fetched) written into ``--out``;
an existing ``report.html`` there is never overwritten silently: the caller chooses the directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from rac_fw.contract import Evidence, Verdict
from rac_fw.report import figures
from rac_fw.report.figures import Bar, PinCell, RegionBox, Route

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

PAGE_NAME = "report.html"


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


def _pins(facts: Target, claimed: dict[str, str], evidence: list[Evidence]) -> list[PinCell]:
    """Every pin: claimed (the plan's signal), reserved (chip or board use), free; red where evidence
    names the pin. ``claimed`` maps pin → signal."""
    from rac_fw.domains.firmware.facts.observe import board_usage

    board = board_usage(facts)
    cells = []
    for name, pin in facts.pins.items():
        against = bool(_mentions(evidence, name))
        if name in claimed:
            cells.append(PinCell(name, "conflict" if against else "claimed", claimed[name]))
        elif pin.reserved or name in board:
            cells.append(PinCell(name, "conflict" if against else "reserved", board.get(name, pin.reserved or "")))
        else:
            cells.append(PinCell(name, "conflict" if against else "free", ""))
    # An unknown pin is still drawn, in red, with its evidence in the table below.
    cells += [PinCell(name, "conflict", signal) for name, signal in claimed.items() if name not in facts.pins]
    return cells


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
    from rac_fw.domains.firmware.ops.dma.dma_periph_rx import DmaPeriphRx
    from rac_fw.domains.firmware.pipeline import run_plan
    from rac_fw.domains.firmware.placement import buffer_controller, buffer_needs, placement
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
    claimed = {c.pin: c.signal for c in claims(plan, facts)}
    routes = []
    for buffer in plan.resources.buffers:
        controller = buffer_controller(plan, facts, buffer.name)
        if controller is None:
            continue
        feeder = next(
            (op.peripheral for op in plan.operations if isinstance(op, DmaPeriphRx) and op.buffer == buffer.name),
            "memory",
        )
        streams = ", ".join(f"stream {s} ch {c}" for s, c in controller.routes(feeder)[:2])
        needs = buffer_needs(plan, facts, chosen, buffer.name)
        where = placed.get(buffer.name) or "unplaced"
        if needs is not None:
            care = "clean/invalidate" if needs.cache_maintenance else "no cache care"
            where += f"\nalign {needs.alignment_bytes} B, {care}"
        routes.append(Route(feeder, controller.name, streams, buffer.name, where))
    page = Page(
        title=f"rac-fw report: {source.name} on {facts.id}",
        status=result.status.value,
        facts=[("plan", str(source)), *_facts_rows(facts, chosen),
               ("placement", ", ".join(f"{b} → {r}" for b, r in placed.items()) or "no buffers")],
        verdicts=result.verdicts,
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

    domain = SchedulingDomain()
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
            Bar(op.machine, op.job, verification.starts[op.name], verification.starts[op.name] + op.duration)
            for op in inst.operations
        ]
        page.figures = [
            ("gantt", "Gantt chart", figures.gantt(bars, inst.num_machines, verification.makespan, optimum))
        ]
    return page
