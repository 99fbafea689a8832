"""The PCB report page: the board to scale, with its layers, a legend and a scale bar, the DRC's
findings marked where they are, and every relation with the value the verifier measured.

It runs the PCB domain's own validate → realize → verify → feedback turn on the task (the given bundle, else the
task's own: the start bundle of a repair task, the reference of the others) and draws from the domain's
public types only: the task (:class:`~rac_fw.domains.pcb.board.PcbTask`), the artifact
(:class:`~rac_fw.domains.pcb.artifact.BoardArtifact`), the verifier's geometry of it
(:class:`~rac_fw.domains.pcb.verify.geometry.BoardGeometry`: pads and courtyards as the DRC saw them) and
its verdicts, evidence and relation checks. Nothing is measured here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence
from rac_fw.report.page import Page, ReportError, installed
from rac_fw.report.svg import Svg, wrap

if TYPE_CHECKING:
    from rac_fw.domains.pcb.artifact import BoardArtifact
    from rac_fw.domains.pcb.board import PcbTask
    from rac_fw.domains.pcb.verify.geometry import BoardGeometry

#: Copper colours by layer (KiCad's defaults), drawn bottom first.
LAYER_COLOURS = {"F.Cu": "#c83434", "In1.Cu": "#c2c200", "In2.Cu": "#c200c2", "B.Cu": "#4d7fc4"}
PAD, VIA, OUTLINE, KEEPOUT, MARKER = "#d4af37", "#9a9a9a", "#e0e000", "#ff000044", "#ff1744"
#: Evidence the DRC markers stand for: the DRC's own codes, unrouted nets and unmet relations.
MARKED = ("E_DRC_", "E_UNROUTED", "E_RELATION")


def pcb_page(task: str, action: Path | None = None, seed: int = 0) -> Page:
    """The PCB report for ``task``: the domain's turn on the bundle, the board drawn to scale."""
    from rac_fw.contract import Action
    from rac_fw.documents import DocumentError, read_document
    from rac_fw.domain import UnknownTask
    from rac_fw.domains.pcb.artifact import BoardArtifact
    from rac_fw.domains.pcb.domain import PcbDomain
    from rac_fw.domains.pcb.tasks import get_task
    from rac_fw.domains.pcb.verify.geometry import BoardGeometry

    domain = installed("pcb", PcbDomain)
    try:
        board = get_task(task)
    except UnknownTask as exc:
        raise ReportError([Evidence(code="E_UNKNOWN_TASK", message=str(exc), location=task, objects=[task])]) from None
    if action is None:
        payload: Any = board.start or board.reference
        described = "the task's start bundle (repair task)" if board.start else "the task's reference bundle"
    else:
        try:
            payload = read_document(action, what="action file")
        except DocumentError as exc:
            raise ReportError(exc.evidence) from None
        described = str(action)
    if not isinstance(payload, dict):
        raise ReportError([Evidence(code="E_SCHEMA", location=str(action), message="the bundle must be a mapping")])
    validation = domain.validate(task, Action(domain=domain.name, task=task, payload=payload))
    if validation.action is None or not validation.ok:
        raise ReportError(validation.evidence)
    realization = domain.realize(task, validation.action, seed)
    verification = domain.verify(task, validation.action, realization)
    feedback = domain.feedback(task, validation, verification)  # the evidence with its re-solved repairs
    artifact = BoardArtifact.model_validate(realization.artifact)
    geometry, problems = BoardGeometry.build(board, artifact)
    if problems:
        raise ReportError(problems)
    page = Page(
        title=f"rac-fw report: PCB {task}",
        status="pass" if verification.ok else "fail",
        facts=[("task", f"{task} ({board.category}): {board.description}"),
               ("board", f"{board.board.width:g} × {board.board.height:g} mm, {board.board.layers} copper layers, "
                f"{len(board.components)} parts, {len(board.nets)} nets"),
               ("bundle", f"{described}: {len(validation.action.relations)} relations"),
               ("copper", f"{len(artifact.tracks)} track segments, {len(artifact.vias)} vias (seed {seed})")],
        verdicts=verification.verdicts,
        evidence=feedback.evidence,
    )
    marked = [e for e in feedback.evidence if e.code.startswith(MARKED)]
    page.figures = [("board", "Board", board_figure(board, artifact, geometry, marked))]
    page.tables = [("relations", "Relations and their measured values",
                    ["", "relation", "objects", "measured", "limit", "unit"],
                    [["✓" if rc.passed else "✗", f"relations[{rc.index}] {rc.kind}", ", ".join(rc.objects),
                      "∞" if math.isinf(rc.measured) else f"{rc.measured:.3f}", f"{rc.limit:g}", rc.unit]
                     for rc in verification.relations])]
    return page


def _scale_bar(board_mm: float) -> float:
    """A round length near a fifth of the board (mm)."""
    raw = board_mm / 5
    step = 10 ** math.floor(math.log10(raw))
    return next(m * step for m in (1, 2, 5, 10) if m * step >= raw)


def _polygon(geom: Any, sx: Any, sy: Any) -> str:
    """SVG path data of a shapely polygon's outline (its holes included)."""
    rings = [geom.exterior, *geom.interiors] if hasattr(geom, "exterior") else []
    return " ".join("M" + " L".join(f"{sx(x):.2f},{sy(y):.2f}" for x, y in ring.coords) + " Z" for ring in rings)


def board_figure(task: PcbTask, artifact: BoardArtifact, geometry: BoardGeometry, marked: list[Evidence]) -> str:
    """The board from above to scale: outline, keepouts and zones, courtyards with references, copper by
    layer, pads, vias; a numbered red marker at each DRC finding or unmet relation; legend and scale bar."""
    board = task.board
    scale = min(760 / board.width, 520 / board.height)
    margin, legend_w = 30.0, 250.0
    width = margin * 2 + board.width * scale + legend_w
    height = margin * 2 + board.height * scale + 40

    def sx(x: float) -> float:
        return margin + x * scale

    def sy(y: float) -> float:
        return margin + y * scale

    fig = Svg(width, max(height, 360), f"PCB {task.name}: {board.width:g} × {board.height:g} mm, to scale")
    fig.rect(sx(0), sy(0), board.width * scale, board.height * scale, fill="#0b3d0b", stroke=OUTLINE,
             stroke_width=2, tip=f"board outline {board.width:g} × {board.height:g} mm")
    for region in board.regions:
        keepout = region.kind == "keepout"
        fig.rect(sx(region.x0), sy(region.y0), (region.x1 - region.x0) * scale, (region.y1 - region.y0) * scale,
                 fill=KEEPOUT if keepout else "none", stroke="#ff5252" if keepout else "#dddddd",
                 stroke_dasharray=None if keepout else "4,3", tip=f"{region.kind} {region.name}: {region.description}")
        fig.text(sx(region.x0) + 3, sy(region.y0) + 8, region.name, size=9, fill="#ffcdd2" if keepout else "#ddd")
    for layer in reversed(board.layer_names):
        for track in artifact.tracks:
            if track.layer == layer:
                fig.line(sx(track.x1), sy(track.y1), sx(track.x2), sy(track.y2), LAYER_COLOURS.get(layer, "#888"),
                         max(track.width * scale, 1), stroke_linecap="round", opacity="0.85",
                         tip=f"{track.net} on {layer}, {track.width:g} mm")
    for copper in geometry.copper:
        if copper.kind == "pad" and copper.layer == board.layer_names[0]:
            fig.path(_polygon(copper.geom, sx, sy), fill=PAD, stroke=None, tip=f"{copper.label} {copper.net or ''}")
    for index, via in enumerate(artifact.vias):
        fig.circle(sx(via.x), sy(via.y), via.diameter / 2 * scale, fill=VIA, stroke="#333",
                   tip=f"via {index} ({via.net}), drill {via.drill:g} mm")
    for ref, courtyard in sorted(geometry.courtyards.items()):
        x0, y0, x1, y1 = courtyard.bounds
        fig.rect(sx(x0), sy(y0), (x1 - x0) * scale, (y1 - y0) * scale, fill="none", stroke="#d0d0d0",
                 stroke_dasharray="3,2", tip=f"{ref} courtyard")
        fig.text(sx((x0 + x1) / 2), sy((y0 + y1) / 2), ref, size=max(8, min(12, 0.9 * scale)), anchor="middle",
                 fill="#fff", weight="bold")
    for number, evidence in enumerate(marked, start=1):
        spot = _where(evidence, task, geometry)
        if spot is not None:
            cx, cy = sx(spot[0]), sy(spot[1])
            fig.circle(cx, cy, 11, fill="none", stroke=MARKER, stroke_width=3, tip=f"{number}: {evidence.message}",
                       data={"marker": str(number), "code": evidence.code})
            fig.text(cx + 13, cy - 9, str(number), size=12, fill=MARKER, weight="bold")
    # Scale bar under the board, legend at its right.
    bar = _scale_bar(board.width)
    y = sy(board.height) + 22
    fig.line(sx(0), y, sx(bar), y, "#222", 3)
    for x in (sx(0), sx(bar)):
        fig.line(x, y - 5, x, y + 5, "#222", 2)
    fig.text(sx(bar) + 8, y, f"{bar:g} mm", size=12, data={"scale-mm": f"{bar:g}"})
    lx, ly = sx(board.width) + 24, margin + 6
    fig.text(lx, ly, "Legend", size=13, weight="bold")
    rows = [(LAYER_COLOURS.get(name, "#888"), "track", f"copper {name}") for name in board.layer_names]
    rows += [(PAD, "box", "pad"), (VIA, "circle", "via"), ("#d0d0d0", "dash", "courtyard (reference)"),
             (KEEPOUT, "box", "keepout"), ("#dddddd", "dash", "zone"), (MARKER, "ring", "DRC finding / unmet relation")]
    for i, (colour, kind, label) in enumerate(rows):
        ry = ly + 22 + i * 20
        if kind == "track":
            fig.line(lx, ry, lx + 20, ry, colour, 4)
        elif kind == "circle":
            fig.circle(lx + 10, ry, 6, fill=colour, stroke="#333")
        elif kind == "ring":
            fig.circle(lx + 10, ry, 7, fill="none", stroke=colour, stroke_width=3)
        elif kind == "dash":
            fig.rect(lx, ry - 6, 20, 12, fill="none", stroke=colour, stroke_dasharray="3,2")
        else:
            fig.rect(lx, ry - 6, 20, 12, fill=colour, stroke="#666")
        fig.text(lx + 28, ry, label, size=11, data={"legend": label})
    notes_y = ly + 22 + len(rows) * 20 + 10
    for number, evidence in enumerate(marked[:12], start=1):
        fig.text(lx, notes_y + (number - 1) * 26, wrap(f"{number}. {evidence.code}: {evidence.message}", 40, 2),
                 size=9, fill="#b71c1c", tip=evidence.message)
    return fig.render()


def _where(evidence: Evidence, task: PcbTask, geometry: BoardGeometry) -> tuple[float, float] | None:
    """The centre of what a finding names: copper (``pad U1.3``, ``track 4 (GND)``), a pin (``U1.3``), a
    part's courtyard or a region; None when it names nothing drawn."""
    labels = {c.label: c.geom for c in geometry.copper}
    boxes: list[tuple[float, float, float, float]] = []
    for name in evidence.objects:
        ref = name.split(".")[0]
        geom = labels.get(name) or labels.get(f"pad {name}") or geometry.courtyards.get(name)
        if geom is None and ref in geometry.courtyards and "." not in name:
            geom = geometry.courtyards[ref]
        if geom is not None:
            boxes.append(geom.bounds)
        elif name in task.regions:
            region = task.regions[name]
            boxes.append((region.x0, region.y0, region.x1, region.y1))
    if not boxes:
        return None
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    return (x0 + x1) / 2, (y0 + y1) / 2
