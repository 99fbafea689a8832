"""Design-rule check on the rebuilt geometry: copper-copper and copper-edge clearance, courtyard
overlaps, parts and copper in keepouts, unrouted connections, track width and via rules.

Each check yields one verdict (count of violations, limit 0) and one evidence item per violation with
the objects involved and the magnitude in mm. Distances are shapely's exact polygon distances.
"""

from __future__ import annotations

from shapely import STRtree

from rac_fw.contract import Evidence, Magnitude, Verdict
from rac_fw.domains.pcb.board import PcbTask
from rac_fw.domains.pcb.verify.geometry import BoardGeometry, Copper

EPS = 1e-6
MAX_REPORTED = 20  # evidence items per check (the verdict still counts all of them)


def verdict(name: str, found: list[Evidence], detail: str) -> Verdict:
    return Verdict(predicate=name, passed=not found, measured=len(found), limit=0, unit="violations",
                   detail=found[0].message if found else detail)


def _given(a: Copper, b: Copper) -> bool:
    """Pairs the task itself fixed, not judged: pads and holes of one land pattern, two holes, and the
    pads of two parts the task placed (a real board's own layout)."""
    if a.owner and a.owner == b.owner:
        return True
    if a.kind == "hole" and b.kind == "hole":
        return True
    return a.fixed and b.fixed


def _clearance(task: PcbTask, geo: BoardGeometry) -> list[Evidence]:
    rules = task.board.rules
    out: list[Evidence] = []
    for layer in task.board.layer_names:
        items: list[Copper] = [c for c in geo.copper if c.layer == layer]
        if len(items) < 2:
            continue
        tree = STRtree([c.geom for c in items])
        left, right = tree.query([c.geom for c in items], predicate="dwithin", distance=rules.max_clearance - EPS)
        seen: set[tuple[str, str]] = set()
        for i, j in zip(left.tolist(), right.tolist(), strict=True):
            if i >= j:
                continue
            a, b = items[i], items[j]
            if a.net is not None and a.net == b.net:
                continue
            if (a.kind == "pad" and b.kind == "pad" and a.label == b.label) or _given(a, b):
                continue
            key = (a.label, b.label)
            if key in seen:
                continue
            clearance = rules.clearance_between(a.net, b.net)
            dist = a.geom.distance(b.geom)
            if dist >= clearance - EPS:
                continue
            seen.add(key)
            out.append(Evidence(
                code="E_DRC_CLEARANCE", location=f"layer {layer}", objects=[a.label, b.label],
                message=f"{a.label} and {b.label} on {layer} are {dist:.3f} mm apart; the rule is {clearance} mm"
                + (" (short circuit)" if dist <= EPS else ""),
                magnitudes=[Magnitude(name="clearance deficit", value=round(clearance - dist, 4), unit="mm")]))
    return out


def _edge(task: PcbTask, geo: BoardGeometry) -> list[Evidence]:
    rule = task.board.rules.edge_clearance
    edge = geo.outline.exterior
    out: list[Evidence] = []
    seen: set[str] = set()
    for c in geo.copper:
        if c.label in seen or c.fixed or c.kind == "hole":  # a placed connector may overhang the edge
            continue
        inside = geo.outline.contains(c.geom)
        dist = c.geom.distance(edge) if inside else 0.0
        if dist < rule - EPS:
            seen.add(c.label)
            out.append(Evidence(
                code="E_DRC_EDGE", location=f"layer {c.layer}", objects=[c.label],
                message=f"{c.label} is {'outside the board' if not inside else f'{dist:.3f} mm from the edge'}; "
                f"the rule is {rule} mm",
                magnitudes=[Magnitude(name="edge clearance deficit", value=round(rule - dist, 4), unit="mm")]))
    return out


def _overlaps(task: PcbTask, geo: BoardGeometry) -> list[Evidence]:
    refs = sorted(geo.courtyards)
    polys = [geo.courtyards[r] for r in refs]
    out: list[Evidence] = []
    tree = STRtree(polys)
    left, right = tree.query(polys, predicate="intersects") if len(polys) > 1 else ([], [])
    parts = task.parts
    for i, j in zip(list(left), list(right), strict=True):
        a, b = parts[refs[i]], parts[refs[j]]
        if i < j and a.side == b.side and (a.fixed is None or b.fixed is None):  # one side's courtyards meet
            area = polys[i].intersection(polys[j]).area
            if area > EPS:
                out.append(Evidence(code="E_DRC_OVERLAP", objects=[refs[i], refs[j]], location="courtyards",
                                    message=f"courtyards of {refs[i]} and {refs[j]} overlap by {area:.3f} mm²",
                                    magnitudes=[Magnitude(name="overlap", value=round(area, 4), unit="mm²")]))
    for r, poly in zip(refs, polys, strict=True):
        if parts[r].fixed is not None:
            continue  # placed by the task (a connector may overhang the edge on purpose)
        outside = poly.difference(geo.outline).area
        if outside > EPS:
            out.append(Evidence(code="E_DRC_OUTSIDE", objects=[r], location="courtyards",
                                message=f"{r} lies {outside:.3f} mm² outside the board outline",
                                magnitudes=[Magnitude(name="outside", value=round(outside, 4), unit="mm²")]))
    return out


def _keepouts(task: PcbTask, geo: BoardGeometry) -> list[Evidence]:
    """Rule areas: movable parts' courtyards where parts are not allowed, tracks and vias where they are
    not, on the area's layers."""
    from shapely import Polygon

    out: list[Evidence] = []
    for reg in task.board.regions:
        if reg.kind != "keepout":
            continue
        zone = Polygon(reg.outline()).buffer(0)
        for ref, poly in sorted(geo.courtyards.items()):
            if not reg.no_parts or task.parts[ref].fixed is not None:
                continue
            area = poly.intersection(zone).area
            if area > EPS:
                out.append(Evidence(code="E_DRC_KEEPOUT", objects=[ref, reg.name], location=f"region {reg.name}",
                                    message=f"{ref} intrudes {area:.3f} mm² into keepout {reg.name}",
                                    magnitudes=[Magnitude(name="intrusion", value=round(area, 4), unit="mm²")]))
        for c in geo.copper:
            banned = ((c.kind == "track" and reg.no_tracks) or (c.kind == "via" and reg.no_vias)
                      or (c.kind == "pour" and reg.no_pours))
            # a pour filled up to the area's edge touches it without entering: judge by area
            if banned and (not reg.layers or c.layer in reg.layers) and c.geom.intersection(zone).area > EPS:
                out.append(Evidence(code="E_DRC_KEEPOUT", objects=[c.label, reg.name], location=f"region {reg.name}",
                                    message=f"{c.label} runs through keepout {reg.name}"))
    return out


def _unrouted(task: PcbTask, geo: BoardGeometry) -> list[Evidence]:
    """Connectivity from geometry: copper that touches (same layer, or through a via/TH pad) is joined."""
    parent = list(range(len(geo.copper)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for layer in task.board.layer_names:
        idx = [i for i, c in enumerate(geo.copper) if c.layer == layer and c.kind != "hole"]
        if len(idx) < 2:
            continue
        tree = STRtree([geo.copper[i].geom for i in idx])
        left, right = tree.query([geo.copper[i].geom for i in idx], predicate="intersects")
        for a, b in zip(left.tolist(), right.tolist(), strict=True):
            parent[find(idx[a])] = find(idx[b])
    by_label: dict[str, list[int]] = {}
    for i, c in enumerate(geo.copper):
        by_label.setdefault(c.label, []).append(i)
    for members in by_label.values():  # a via or TH pad joins its layers
        for i in members[1:]:
            parent[find(i)] = find(members[0])
    out: list[Evidence] = []
    for net, pins in sorted(task.nets.items()):
        if len(pins) < 2:
            continue
        groups: dict[int, list[str]] = {}
        for ref, pin in pins:
            i = by_label[f"pad {ref}.{pin}"][0]
            groups.setdefault(find(i), []).append(f"{ref}.{pin}")
        if len(groups) > 1:
            islands = sorted(groups.values())
            out.append(Evidence(code="E_UNROUTED", objects=[net, *[g[0] for g in islands]], location=f"net {net}",
                                message=f"net {net} is in {len(islands)} pieces: "
                                + " | ".join(", ".join(g) for g in islands),
                                magnitudes=[Magnitude(name="unrouted connections", value=len(islands) - 1,
                                                      unit="connections")]))
    return out


def _track_rules(task: PcbTask, geo: BoardGeometry) -> tuple[list[Evidence], list[Evidence]]:
    r = task.board.rules
    least = r.min_track_width
    min_drill, _ = r.min_via
    widths = [Evidence(code="E_DRC_TRACK_WIDTH", objects=[label], location=label,
                       message=f"{label} is {w} mm wide; the minimum is {least} mm",
                       magnitudes=[Magnitude(name="width deficit", value=round(least - w, 4), unit="mm")])
              for label, w in geo.widths if w < least - EPS]
    vias: list[Evidence] = []
    for label, drill, dia in geo.via_dims:
        ring = (dia - drill) / 2
        if drill < min_drill - EPS:
            vias.append(Evidence(code="E_DRC_VIA", objects=[label], location=label,
                                 message=f"{label} drill {drill} mm is below the minimum {min_drill} mm",
                                 magnitudes=[Magnitude(name="drill deficit", value=round(min_drill - drill, 4),
                                                       unit="mm")]))
        if ring < r.min_annular_ring - EPS:
            vias.append(Evidence(code="E_DRC_VIA", objects=[label], location=label,
                                 message=f"{label} annular ring {ring:.3f} mm is below {r.min_annular_ring} mm",
                                 magnitudes=[Magnitude(name="ring deficit", value=round(r.min_annular_ring - ring, 4),
                                                       unit="mm")]))
    return widths, vias


def drc(task: PcbTask, geo: BoardGeometry) -> tuple[list[Verdict], list[Evidence]]:
    checks = [("drc_clearance", _clearance(task, geo), "copper-copper clearance holds on every layer"),
              ("drc_edge_clearance", _edge(task, geo), "all copper keeps the edge clearance"),
              ("drc_courtyards", _overlaps(task, geo), "no courtyard overlaps another or leaves the board"),
              ("drc_keepouts", _keepouts(task, geo), "keepout regions are empty")]
    widths, vias = _track_rules(task, geo)
    checks += [("drc_track_width", widths, "every track meets the minimum width"),
               ("drc_vias", vias, "every via meets drill and annular-ring rules")]
    if task.route:
        checks.append(("drc_unrouted", _unrouted(task, geo), "every net is fully connected"))
    verdicts = [verdict(name, found, ok) for name, found, ok in checks]
    evidence = [e for _, found, _ in checks for e in found[:MAX_REPORTED]]
    return verdicts, evidence
