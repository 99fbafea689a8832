"""Manufacturability checks on the rebuilt geometry (the rules are :mod:`rac_fw.domains.pcb.dfm`'s):
vias in surface-mount pads, vias under an exposed pad's land pattern, and narrow same-net slots
between parallel runs of one net (a meander whose legs are too close).

Kept apart from :mod:`drc` because the real-board baselines store the DRC of the designers' own
layouts, where a plugged via in a thermal pad is the designer's choice: these checks judge what the
realizer made.
"""

from __future__ import annotations

import math

from shapely import STRtree

from rac_fw.contract import Evidence, Magnitude, Verdict
from rac_fw.domains.pcb import dfm as rules
from rac_fw.domains.pcb.artifact import BoardArtifact
from rac_fw.domains.pcb.board import PcbTask, Placement
from rac_fw.domains.pcb.verify.drc import MAX_REPORTED, verdict
from rac_fw.domains.pcb.verify.geometry import BoardGeometry

EPS = 1e-6


def vias_in_pads(geo: BoardGeometry) -> list[Evidence]:
    """Vias whose copper overlaps a surface-mount pad (any net: its own is the wicking case)."""
    vias = {c.label: c for c in geo.copper if c.kind == "via"}
    keys = sorted(k for k, pad in geo.pads.items() if rules.is_smd(pad))
    if not vias or not keys:
        return []
    tree = STRtree([geo.pad_geoms[k] for k in keys])
    out: list[Evidence] = []
    for label, via in sorted(vias.items()):
        for n in sorted(tree.query(via.geom, predicate="intersects").tolist()):
            key = keys[n]
            area = via.geom.intersection(geo.pad_geoms[key]).area
            if area > EPS:
                inside = geo.pad_geoms[key].contains(via.geom.centroid)
                out.append(Evidence(
                    code="E_DFM_VIA_IN_PAD", objects=[label, f"{key[0]}.{key[1]}"], location=label,
                    message=f"{label} {'has its centre inside' if inside else 'overlaps'} SMD pad "
                    f"{key[0]}.{key[1]} by {area:.3f} mm² (an open via wicks the solder away)",
                    magnitudes=[Magnitude(name="overlap", value=round(area, 4), unit="mm²")]))
    return out


def vias_under_exposed_pads(task: PcbTask, geo: BoardGeometry) -> list[Evidence]:
    """Vias inside the pad-ring area of a part with an exposed pad."""
    placements = {r: Placement(x, y, geo.rotations[r]) for r, (x, y) in geo.centres.items()}
    areas = rules.via_free_areas(task, placements)
    out: list[Evidence] = []
    for c in geo.copper:
        if c.kind != "via" or c.layer != task.board.layer_names[0]:
            continue
        for ref, area in areas:
            overlap = c.geom.intersection(area).area
            if overlap > EPS:
                out.append(Evidence(
                    code="E_DFM_VIA_UNDER_EXPOSED_PAD", objects=[c.label, ref], location=c.label,
                    message=f"{c.label} lies {overlap:.3f} mm² inside {ref}'s exposed-pad land pattern",
                    magnitudes=[Magnitude(name="overlap", value=round(overlap, 4), unit="mm²")]))
    return out


def same_net_gaps(task: PcbTask, art: BoardArtifact) -> list[Evidence]:
    """Pairs of parallel tracks of one net on one layer, side by side over some length, whose copper
    gap is above 0 (not merged) and below the net's clearance."""
    out: list[Evidence] = []
    groups: dict[tuple[str, str], list[int]] = {}
    for i, t in enumerate(art.tracks):
        groups.setdefault((t.net, t.layer), []).append(i)
    for (net, layer), idx in sorted(groups.items()):
        rule = task.board.rules.clearance_between(net, net)
        for n, i in enumerate(idx):
            for j in idx[n + 1:]:
                gap, overlap = _parallel_gap(art, i, j)
                if overlap > EPS and EPS < gap < rule - EPS:
                    out.append(Evidence(
                        code="E_DFM_SAME_NET_GAP", objects=[f"track {i} ({net})", f"track {j} ({net})"],
                        location=f"layer {layer}",
                        message=f"tracks {i} and {j} of net {net} on {layer} run side by side for {overlap:.2f} mm "
                        f"with a {gap:.3f} mm copper gap; the clearance is {rule} mm",
                        magnitudes=[Magnitude(name="gap deficit", value=round(rule - gap, 4), unit="mm")]))
    return out


def _parallel_gap(art: BoardArtifact, i: int, j: int) -> tuple[float, float]:
    """(copper gap, length over which they face each other) of two parallel tracks; (inf, 0) otherwise."""
    a, b = art.tracks[i], art.tracks[j]
    ux, uy = a.x2 - a.x1, a.y2 - a.y1
    la = math.hypot(ux, uy)
    vx, vy = b.x2 - b.x1, b.y2 - b.y1
    lb = math.hypot(vx, vy)
    if la < EPS or lb < EPS or abs(ux * vy - uy * vx) > EPS * la * lb:
        return math.inf, 0.0
    ux, uy = ux / la, uy / la
    s0 = (b.x1 - a.x1) * ux + (b.y1 - a.y1) * uy
    s1 = (b.x2 - a.x1) * ux + (b.y2 - a.y1) * uy
    overlap = min(la, max(s0, s1)) - max(0.0, min(s0, s1))
    dist = abs((b.x1 - a.x1) * uy - (b.y1 - a.y1) * ux)
    return dist - (a.width + b.width) / 2, overlap


def dfm_checks(task: PcbTask, geo: BoardGeometry, art: BoardArtifact) -> list[tuple[str, list[Evidence], str]]:
    return [("dfm_via_in_pad", vias_in_pads(geo), "no via overlaps a surface-mount pad"),
            ("dfm_via_under_exposed_pad", vias_under_exposed_pads(task, geo),
             "no via lies under an exposed pad's land pattern"),
            ("dfm_same_net_gap", same_net_gaps(task, art), "parallel runs of one net keep the clearance")]


def dfm(task: PcbTask, geo: BoardGeometry, art: BoardArtifact) -> tuple[list[Verdict], list[Evidence]]:
    checks = dfm_checks(task, geo, art)
    return ([verdict(name, found, ok) for name, found, ok in checks],
            [e for _, found, _ in checks for e in found[:MAX_REPORTED]])
