"""Exposed-pad ties: the realizer joins an exposed pad to the pins of its own net in the pad ring with
straight stubs under the package, before routing.

Why: DFM (:mod:`dfm`) keeps vias out of an exposed-pad part's pad ring, so the router cannot reach
the pad from below, and its 0.25 mm grid cannot thread the corner of a 0.5 mm-pitch ring. A stub
along the ring pin's own axis (the datasheet way: a ground pin tied to the thermal pad) is exact
geometry, checked here against every other net's pad with the clearance rule; the router then treats
the exposed pad and its tied pins as one terminal (any of them may lead the net out). An exposed pad
with no such pin, or whose stubs do not clear, stays a terminal of its net (and is reported unrouted
if nothing reaches it).
"""

from __future__ import annotations

from dataclasses import dataclass

from shapely import LineString, Point, Polygon

from rac_fw.domains.pcb.board import PcbTask, Placement
from rac_fw.domains.pcb.dfm import exposed_pads, is_smd
from rac_fw.domains.pcb.footprints import PlacedPad, placed_pads

STEP = 0.01  # mm along the pin's axis while looking for the exposed pad
REACH = 3.0  # mm: a ring pin farther than this from its exposed pad is not tied


@dataclass(frozen=True)
class Tie:
    net: str
    layer: str
    ref: str
    pin: str  # the exposed pad's pin name
    ring_pin: str  # the ring pin it is tied to
    x1: float
    y1: float
    x2: float
    y2: float


def _stub(q: PlacedPad, ep: Polygon, hw: float) -> tuple[float, float, float, float] | None:
    """From ``q``'s centre along its long axis toward ``ep`` until the track overlaps it by ``hw``."""
    if q.tilt:
        return None
    c = ep.centroid
    if q.w >= q.h:
        ux, uy = (1.0 if c.x > q.cx else -1.0), 0.0
    else:
        ux, uy = 0.0, (1.0 if c.y > q.cy else -1.0)
    for k in range(1, int(REACH / STEP) + 1):
        x, y = q.cx + ux * k * STEP, q.cy + uy * k * STEP
        if ep.distance(Point(x, y)) <= hw / 2:
            return q.cx, q.cy, round(x + ux * hw, 5), round(y + uy * hw, 5)
    return None


def exposed_pad_ties(task: PcbTask, placements: dict[str, Placement]) -> list[Tie]:
    rules = task.board.rules
    hw = rules.track_width / 2
    names = task.board.layer_names
    everything = task.pads_at(placements)
    out: list[Tie] = []
    for comp in task.components:
        p = comp.fixed or placements.get(comp.ref)
        eps = exposed_pads(comp.fp)
        if p is None or not eps:
            continue
        pads = placed_pads(comp.ref, comp.fp, p.x, p.y, p.rot, comp.pins, comp.side)
        for k in sorted(eps):
            ep = pads[k]
            if ep.net is None:
                continue
            layer = ep.on(names)[0]
            poly = Polygon(ep.outline())
            ring = [q for j, q in enumerate(pads) if j not in eps and q.net == ep.net and is_smd(q)
                    and q.layers == ep.layers]
            for q in sorted(ring, key=lambda q: q.pin):  # every ring pin of its net that a stub can reach
                seg = _stub(q, poly, hw)
                if seg is not None and _clear(seg, ep.net, layer, everything, names, task, hw):
                    out.append(Tie(ep.net, layer, ep.ref, ep.pin, q.pin, *seg))
    return out


def _clear(seg: tuple[float, float, float, float], net: str, layer: str, pads: list[PlacedPad],
           names: tuple[str, ...], task: PcbTask, hw: float) -> bool:
    copper = LineString([seg[:2], seg[2:]]).buffer(hw, quad_segs=8)
    for o in pads:
        if o.net == net or layer not in o.on(names):
            continue
        shape = Point(o.cx, o.cy).buffer(o.w / 2, quad_segs=16) if o.round else Polygon(o.outline())
        if copper.distance(shape) < task.board.rules.clearance_between(net, o.net) - 1e-9:
            return False
    return True
