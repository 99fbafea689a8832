"""One geometric oracle per relation: it measures the artifact and compares with the class's limit.

The oracles read the relation (what was asked) and the rebuilt geometry (what was made); none reads a
label the realizer attached to its result. Each returns the measured value, the limit and, on failure,
evidence naming the relation and the objects with the excess in mm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from shapely import LineString, MultiLineString, Point, Polygon, unary_union

from rac_fw.contract import Evidence, Magnitude, Verdict
from rac_fw.domains.pcb import classes
from rac_fw.domains.pcb.board import PcbTask
from rac_fw.domains.pcb.footprints import edge_rotations
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.verify.geometry import BoardGeometry

EPS = 1e-6
COUPLING_DISTANCE = 0.8  # mm, centre-line to centre-line, within which a pair counts as coupled
FANOUT = 1.0  # mm around the pair's pads that is fan-out, not pair routing


@dataclass
class RelationCheck:
    index: int
    kind: str
    objects: list[str]
    measured: float
    limit: float
    unit: str
    passed: bool
    verdict: Verdict
    evidence: Evidence | None


def _edge_line(geo: BoardGeometry, side: str) -> LineString:
    x0, y0, x1, y1 = geo.outline.bounds
    return {"left": LineString([(x0, y0), (x0, y1)]), "right": LineString([(x1, y0), (x1, y1)]),
            "top": LineString([(x0, y0), (x1, y0)]), "bottom": LineString([(x0, y1), (x1, y1)])}[side]


def _measure(task: PcbTask, rel: Any, geo: BoardGeometry) -> tuple[float, float, str, list[str], str]:
    """(measured, limit, unit, objects, what) for one relation; passing means measured ≤ limit."""
    k = rel.kind
    if k == "board_edge":
        court = geo.courtyards[rel.ref]
        gap = court.distance(_edge_line(geo, rel.side))
        limit = classes.EDGE_GAP[rel.distance]
        rot = round(geo.rotations[rel.ref]) % 360
        allowed = edge_rotations(task.parts[rel.ref].fp, rel.side)
        if rot not in allowed:
            turn = min(min(abs(rot - a), 360 - abs(rot - a)) for a in allowed)
            how = "face" if task.parts[rel.ref].fp.front is not None else "lie along"
            return turn, 0.0, "°", [rel.ref], f"{rel.ref} does not {how} the {rel.side} edge; turn needed"
        outside = court.difference(geo.outline)
        if outside.area > EPS:  # pushed past the outline: touching the edge line is no gap to claim
            depth = max(geo.outline.exterior.distance(Point(x, y)) for x, y in court.exterior.coords
                        if not geo.outline.covers(Point(x, y)))
            return limit + depth, limit, "mm", [rel.ref], \
                f"{rel.ref} sticks out {depth:.2f} mm past the board outline (gap to the {rel.side} edge plus overhang)"
        return gap, limit, "mm", [rel.ref], f"gap of {rel.ref} to the {rel.side} edge"
    if k == "place_relative":
        a = geo.courtyards[rel.a]
        if "." in rel.b:
            ref, _, pin = rel.b.partition(".")
            b = geo.pad_geoms[(ref, pin)]
        else:
            b = geo.courtyards[rel.b]
        gap = a.distance(b)
        ax0, ay0, ax1, ay1 = a.bounds
        bx0, by0, bx1, by1 = b.bounds
        wrong = {"left_of": ax1 - bx0, "right_of": bx1 - ax0, "above": ay1 - by0, "below": by1 - ay0}.get(
            rel.relation, 0.0)
        measured = gap + max(0.0, wrong)
        return measured, classes.NEAR_GAP[rel.distance], "mm", [rel.a, rel.b], f"{rel.a} {rel.relation} {rel.b}"
    if k == "decouple":
        ref, _, pin = rel.pin.partition(".")
        net = task.parts[ref].pins[pin]
        target = geo.pad_geoms[(ref, pin)]
        gaps = [geo.pad_geoms[(rel.cap, p)].distance(target) for p, n in task.parts[rel.cap].pins.items() if n == net]
        return min(gaps), classes.DECOUPLE_GAP[rel.distance], "mm", [rel.cap, rel.pin], \
            f"pad gap of {rel.cap} to {rel.pin}"
    if k == "align":
        i = 1 if rel.axis == "horizontal" else 0
        vals = [geo.centres[r][i] for r in rel.refs]
        return max(vals) - min(vals), classes.ALIGN_RESIDUAL, "mm", list(rel.refs), f"{rel.axis} alignment residual"
    if k == "symmetric":
        a, c = rel.refs
        (xa, ya), (xc, yc) = geo.centres[a], geo.centres[c]
        x0, y0, x1, y1 = geo.outline.bounds
        if rel.axis == "vertical":
            res = abs((xa - x0) + (xc - x0) - (x1 - x0)) + abs(ya - yc)
        else:
            res = abs((ya - y0) + (yc - y0) - (y1 - y0)) + abs(xa - xc)
        return res, classes.SYMMETRY_RESIDUAL, "mm", [a, c], f"mirror residual about the {rel.axis} centre line"
    if k == "group":
        pts = [geo.centres[r] for r in rel.refs]
        cx = sum(p[0] for p in pts) / len(pts)
        cy = sum(p[1] for p in pts) / len(pts)
        spread = max(math.hypot(p[0] - cx, p[1] - cy) for p in pts)
        return spread, classes.GROUP_SPREAD[rel.spread], "mm", list(rel.refs), "largest distance from the centroid"
    if k == "keepout":
        reg = task.regions[rel.region]
        zone = Polygon(reg.outline()).buffer(0)
        area = sum(geo.courtyards[r].intersection(zone).area for r in rel.refs)
        area += sum(c.geom.intersection(zone).area for n in rel.nets for c in geo.net_copper(n))
        return area, 0.0, "mm²", [rel.region, *rel.refs, *rel.nets], f"intrusion into {rel.region}"
    if k == "route_matched":
        lengths = [geo.routed_length(n) for n in rel.nets]
        return max(lengths) - min(lengths), classes.LENGTH_TOLERANCE[rel.tolerance], "mm", list(rel.nets), \
            "routed length mismatch " + ", ".join(f"{n}={v:.2f}" for n, v in zip(rel.nets, lengths, strict=True))
    if k == "diff_pair":
        lp, ln = geo.routed_length(rel.p), geo.routed_length(rel.n)
        mismatch = abs(lp - ln)
        need = classes.PAIR_COUPLING[rel.tolerance]
        if not geo.track_lines.get(rel.p) or not geo.track_lines.get(rel.n):
            bare = [n for n in (rel.p, rel.n) if not geo.track_lines.get(n)]
            return 1.0, round(1 - need, 4), "uncoupled fraction", [rel.p, rel.n], \
                f"{' and '.join(bare)} {'has' if len(bare) == 1 else 'have'} no tracks: nothing of the pair is coupled"
        coupled = _coupling(task, geo, rel.p, rel.n)
        if coupled < need:
            return round(1 - coupled, 4), round(1 - need, 4), "uncoupled fraction", [rel.p, rel.n], \
                f"{coupled:.0%} of the pair runs coupled, {need:.0%} needed"
        return mismatch, classes.LENGTH_TOLERANCE[rel.tolerance], "mm", [rel.p, rel.n], \
            f"pair length mismatch ({rel.p}={lp:.2f}, {rel.n}={ln:.2f}; {coupled:.0%} coupled)"
    if k == "layer_preference":
        off = sum(line.length for layer, line in geo.track_lines.get(rel.net, []) if layer != rel.layer)
        off += geo.via_count.get(rel.net, 0)
        return off, 0.0, "mm", [rel.net, rel.layer], f"copper of {rel.net} off {rel.layer} (mm of track + vias)"
    if k == "via_limit":
        return geo.via_count.get(rel.net, 0), rel.max, "vias", [rel.net], f"vias on {rel.net}"
    # route_priority orders the router's work; what can be measured is that the nets got copper
    missing = [n for n in rel.nets if len(task.nets[n]) > 1 and not geo.track_lines.get(n)]
    return len(missing), 0, "nets", list(rel.nets), "prioritized nets without copper"


def _coupling(task: PcbTask, geo: BoardGeometry, p: str, n: str) -> float:
    """Fraction of each half's track length within ``COUPLING_DISTANCE`` of the other half (the smaller
    of the two), not counting the fan-out within ``FANOUT`` of the pair's own pads, where the pin pitch
    sets the spacing."""
    ends = unary_union([geo.pad_geoms[m] for net in (p, n) for m in task.nets[net]]).buffer(FANOUT)
    lines_p = [line for _, line in geo.track_lines.get(p, [])]
    lines_n = [line for _, line in geo.track_lines.get(n, [])]
    if not lines_p or not lines_n:
        return 0.0
    mp, mn = MultiLineString(lines_p), MultiLineString(lines_n)
    band_p, band_n = unary_union(mp).buffer(COUPLING_DISTANCE), unary_union(mn).buffer(COUPLING_DISTANCE)
    fractions = []
    for mine, other_band in ((mn, band_p), (mp, band_n)):
        body = mine.difference(ends)
        if body.length <= EPS:
            fractions.append(1.0)
        else:
            fractions.append(body.intersection(other_band).length / body.length)
    return min(fractions)


def check_relations(task: PcbTask, action: PcbAction, geo: BoardGeometry,
                    label: str = "relations") -> list[RelationCheck]:
    """One check per relation; ``label`` says whose relations they are (``relations``: the agent's
    bundle, located in the payload; ``requirements``: the task's, located in the task)."""
    out = []
    for i, rel in enumerate(action.relations):
        measured, limit, unit, objects, what = _measure(task, rel, geo)
        passed = measured <= limit + EPS
        shown = f"{measured:.3f}"
        name = f"{label}[{i}]"
        verdict = Verdict(predicate=f"{name} {rel.kind}", passed=passed,
                          measured=round(measured, 4), limit=limit, unit=unit,
                          detail=f"{what}: {shown} {unit} (limit {limit})")
        evidence = None
        if not passed:
            mags = [Magnitude(name="excess", value=round(measured - limit, 4), unit=unit)]
            own = label == "relations"
            evidence = Evidence(code="E_RELATION" if own else "E_REQUIREMENT",
                                location=f"payload.relations[{i}]" if own else f"task.requirements[{i}]",
                                objects=objects, magnitudes=mags,
                                message=f"{name} {rel.kind} does not hold: {what}: {shown} {unit}, limit {limit}")
        out.append(RelationCheck(i, rel.kind, objects, measured, limit, unit, passed, verdict, evidence))
    return out
