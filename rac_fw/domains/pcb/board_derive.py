"""Derive tasks from a real board (``rac-fw pcb import-board``): what the board's designer fixed stays
fixed, what they chose becomes the task, and their layout is kept as numbers to compare with.

From one ``.kicad_pcb`` (read by :mod:`.kicad_board`) and its ``SOURCE.md``:

- **facts**: outline, layers, pours (larger than teardrops), rule areas, land patterns, parts, nets;
  design rules measured on the layout (the narrowest gap and edge distance its copper keeps, its
  most common via) and net classes from the track widths it used per net (KiCad 6+ keep classes in the
  project file, which open-hardware repositories often omit);
- **anchors**: connectors, mounting holes, fiducials, parts that overhang the outline and parts with
  no net stay where the designer put them in every task;
- **relations**, each measured on the human layout by the project's own oracles and given the
  tightest class it meets there (so the human layout is a witness that the reference is feasible):
  ``decouple`` for each capacitor between a supply and ground near an IC pin of its supply,
  ``place_relative`` for crystals at their IC, ``diff_pair`` for pairs named X+/X-, X_P/X_N, DP/DM;
- **tasks**: ``_route`` (all parts placed, copper stripped), ``_place`` (anchors placed, placement
  judged), ``_combo`` (both), and ``_repair`` where two capacitors share a pin (both demanded tight);
- **baseline**: the human layout's wirelength, vias, area and the project DRC on it (pours filled as
  the designer's KiCad filled them).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from shapely import LineString, Point, Polygon, STRtree

from rac_fw.domains.pcb import classes
from rac_fw.domains.pcb.artifact import BoardArtifact, PartPlacement, PourFill, Track, Via
from rac_fw.domains.pcb.board import Board, Component, NetClass, PcbTask, Placement, Region, Rules, Zone
from rac_fw.domains.pcb.footprints import courtyard_polygon, footprint_to_data, placed_pads
from rac_fw.domains.pcb.kicad_board import KBoard, KPart, read_board
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.verify.drc import drc
from rac_fw.domains.pcb.verify.geometry import BoardGeometry
from rac_fw.domains.pcb.verify.oracles import check_relations

GROUND = re.compile(r"^(A|D|P|S)?(GND|VSS|GROUND)([_\-A-Z0-9]*)$", re.I)
ANCHOR_LIBS = ("Connector", "MountingHole", "Fiducial")
ANCHOR_REFS = re.compile(r"^(J|P|CN|CON|USB|H|MH|FID|MK)\d+$", re.I)
CRYSTAL = re.compile(r"^(Y|X|XTAL|OSC)\d+$", re.I)
PAIR_SUFFIXES = (("+", "-"), ("_P", "_N"), ("_DP", "_DN"), ("DP", "DM"), ("_D+", "_D-"))
MIN_POUR_MM2 = 10.0  # smaller "zones" are teardrops and fillets, part of the copper, not a plane
MAX_DECOUPLE = 24
#: Floor of a derived clearance (a common fab minimum, 3.5 mil): narrower gaps in the designer's layout
#: (net ties, Kelvin connections, hand-tuned spots) are reported in its baseline DRC instead.
MIN_CLEARANCE = 0.09
MIN_EDGE = 0.05  # pours filled to 0.075 mm from the edge are common in the boards
KICAD_FORMATS = {20211014: "KiCad 6", 20221018: "KiCad 7", 20240108: "KiCad 8"}


def _floor(v: float, step: float = 0.005) -> float:
    return round(math.floor(v / step + 1e-9) * step, 4)


def read_source(board_dir: Path) -> dict[str, str]:
    """Repository, commit, path and licence from the board's ``SOURCE.md`` table."""
    rows = dict(re.findall(r"^\|\s*([^|]+?)\s*\|\s*(.+?)\s*\|\s*$", (board_dir / "SOURCE.md").read_text("utf-8"), re.M))
    out = {"repository": rows.get("repository", ""), "commit": rows.get("commit", "").strip("`"),
           "path": rows.get("path in repo", "").strip("`"), "licence": rows.get("licence (SPDX)", "")}
    if not all(out.values()):
        raise ValueError(f"{board_dir / 'SOURCE.md'} lacks one of repository, commit, path in repo, licence (SPDX)")
    return out


# --- rules and classes ---------------------------------------------------------------------------------
def _rules(kb: KBoard) -> Rules:
    widths: dict[str, Counter[float]] = {}  # net → track width → mm of track
    for t in kb.tracks:
        length = sum(math.dist(a, b) for a, b in zip(t.points, t.points[1:], strict=False))
        widths.setdefault(t.net, Counter())[round(t.width, 4)] += length  # type: ignore[assignment]
    dominant = {net: c.most_common(1)[0][0] for net, c in widths.items()}
    default_w: float = Counter(dominant.values()).most_common(1)[0][0] if dominant else 0.2
    # the Default via is the smallest the designer used (the DRC's minimum), with its usual pad
    drill: float = min([round(d, 4) for _, _, _, d, _ in kb.vias] or [0.3])
    dia = Counter(round(s, 4) for _, _, _, d, s in kb.vias if round(d, 4) == drill).most_common(1)[0][0] \
        if kb.vias else 0.6
    ring = min([(s - d) / 2 for _, _, _, d, s in kb.vias] or [0.13])
    gap, edge = _measured_gaps(kb)
    clearance = min(0.2, max(MIN_CLEARANCE, _floor(gap)))
    by_width: dict[float, list[str]] = {}
    for net, w in sorted(dominant.items()):
        if w != default_w:
            by_width.setdefault(w, []).append(net)
    nc = tuple(NetClass(f"W{w:g}", clearance, w, dia, drill, tuple(nets)) for w, nets in sorted(by_width.items()))
    return Rules(clearance, default_w, drill, dia, min(0.3, max(MIN_EDGE, _floor(edge))), min(0.13, _floor(ring)), nc)


def _measured_gaps(kb: KBoard) -> tuple[float, float]:
    """The narrowest gap between tracks/vias and copper of another net, and between tracks/vias and the
    edge, in the designer's layout."""
    geoms, nets = [], []
    for t in kb.tracks:
        for a, b in zip(t.points, t.points[1:], strict=False):
            geoms.append((LineString([a, b]).buffer(t.width / 2, quad_segs=4), t.layer))
            nets.append(t.net)
    for net, x, y, _, size in kb.vias:
        geoms.append((Point(x, y).buffer(size / 2, quad_segs=8), "*"))
        nets.append(net)
    n_routed = len(geoms)
    for p in kb.parts:
        for pad in placed_pads(p.ref, p.land, p.x, p.y, p.rot, p.pins, p.side):
            if not pad.hole_only:
                geoms.append((Polygon(pad.outline()).buffer(0), "*" if pad.layers == "*" else
                              kb.layers[0] if pad.layers == "F" else kb.layers[-1]))
                nets.append(pad.net or f"<{p.ref}>")
    if not n_routed:
        return 0.2, 0.3
    tree = STRtree([g for g, _ in geoms])
    gap = 0.2
    left, right = tree.query([g for g, _ in geoms[:n_routed]], predicate="dwithin", distance=0.2)
    for i, j in zip(left.tolist(), right.tolist(), strict=True):
        (gi, li), (gj, lj) = geoms[i], geoms[j]
        if nets[i] != nets[j] and (li == lj or "*" in (li, lj)):
            gap = min(gap, gi.distance(gj))
    outline = Polygon(kb.outline, holes=kb.cutouts).boundary
    fills = [Polygon(ring).buffer(0) for _, _, ring in kb.fills]
    edge = min((outline.distance(g) for g in [g for g, _ in geoms[:n_routed]] + fills), default=0.3)
    return gap, edge


# --- facts → PcbTask -------------------------------------------------------------------------------------
def _anchors(kb: KBoard) -> set[str]:
    outline = Polygon(kb.outline, holes=kb.cutouts)
    out = set()
    for p in kb.parts:
        court = Polygon(courtyard_polygon(p.land, p.x, p.y, p.rot, p.side)).buffer(0)
        if (p.lib_id.split(":")[0].startswith(ANCHOR_LIBS) or ANCHOR_REFS.match(p.ref) or not p.pins
                or "board_only" in p.attrs or court.difference(outline).area > 0.01):
            out.add(p.ref)
    return out


def board_facts(kb: KBoard, rules: Rules) -> Board:
    pours = []
    for z in kb.zones:
        poly = Polygon(z.outline).buffer(0)
        if poly.area >= MIN_POUR_MM2 and isinstance(poly, Polygon):
            simple = poly.simplify(0.02)
            outline = tuple((round(x, 3), round(y, 3)) for x, y in simple.exterior.coords[:-1])
            pours.append(Zone(z.net, z.layers, outline,
                              z.priority, z.clearance, z.min_width, z.connect, z.thermal_gap, z.thermal_width, z.name))
    return Board(kb.width, kb.height, len(kb.layers), rules, tuple(kb.keepouts), tuple(kb.outline),
                 tuple(tuple(c) for c in kb.cutouts), tuple(pours))


def components(kb: KBoard, fixed: Iterable[str]) -> tuple[Component, ...]:
    keep = set(fixed)
    return tuple(Component(p.ref, p.lib_id, p.value, dict(p.pins),
                           Placement(p.x, p.y, p.rot) if p.ref in keep else None, 1.0, p.side, p.land)
                 for p in kb.parts)


def human_artifact(kb: KBoard, nets: Iterable[str]) -> BoardArtifact:
    """The designer's layout as an artifact (arcs as chords, pours as KiCad filled them)."""
    known = set(nets)
    tracks = [Track(net=t.net, layer=t.layer, x1=a[0], y1=a[1], x2=b[0], y2=b[1], width=t.width)
              for t in kb.tracks if t.net in known for a, b in zip(t.points, t.points[1:], strict=False) if a != b]
    vias = [Via(net=n, x=x, y=y, drill=d, diameter=s) for n, x, y, d, s in kb.vias if n in known]
    pours = [PourFill(net=n, layer=lay, points=ring) for n, lay, ring in kb.fills if n in known]
    return BoardArtifact(placements={p.ref: PartPlacement(x=p.x, y=p.y, rot=p.rot) for p in kb.parts},
                         tracks=tracks, vias=vias, pours=pours)


# --- relations measured on the human layout -------------------------------------------------------------
def _tightest(table: dict[str, float], measured: float) -> str | None:
    return next((c for c in classes.CLASSES if measured <= table[c] + 1e-6), None)


def _measure(task: PcbTask, geo: BoardGeometry, rels: list[dict]) -> list[float]:
    checks = check_relations(task, PcbAction.model_validate({"relations": rels}), geo)
    return [c.measured for c in checks]


def _decouples(task: PcbTask, geo: BoardGeometry, movable: set[str]) -> list[dict]:
    ground = {n for n in task.nets if GROUND.match(n)}
    ics = [c for c in task.components if len(c.fp.pin_names) >= 5 and not c.ref.upper().startswith(("J", "C", "R"))]
    out: list[dict] = []
    for cap in task.components:
        if not cap.ref.upper().startswith("C") or cap.ref not in movable or len(cap.pins) != 2:
            continue
        nets = set(cap.pins.values())
        supply = nets - ground
        if len(supply) != 1 or not nets & ground:
            continue
        (net,) = supply
        pins = [f"{ic.ref}.{pin}" for ic in ics for pin, n in ic.pins.items() if n == net]
        if not pins:
            continue
        gaps = _measure(task, geo, [{"kind": "decouple", "cap": cap.ref, "pin": p, "distance": "loose"} for p in pins])
        gap, pin = min(zip(gaps, pins, strict=True))
        cls = _tightest(classes.DECOUPLE_GAP, gap)
        if cls is not None:
            out.append({"kind": "decouple", "cap": cap.ref, "pin": pin, "distance": cls, "_gap": gap})
    out.sort(key=lambda r: r["_gap"])
    return [{k: v for k, v in r.items() if k != "_gap"} for r in out[:MAX_DECOUPLE]]


def _crystals(task: PcbTask, geo: BoardGeometry, movable: set[str]) -> list[dict]:
    out = []
    for x in task.components:
        if not CRYSTAL.match(x.ref) or x.ref not in movable:
            continue
        ics = [c.ref for c in task.components if c.ref != x.ref and len(c.fp.pin_names) >= 8
               and set(c.pins.values()) & set(x.pins.values())]
        if not ics:
            continue
        gaps = _measure(task, geo, [{"kind": "place_relative", "a": x.ref, "b": ic, "relation": "near",
                                     "distance": "loose"} for ic in ics])
        gap, ic = min(zip(gaps, ics, strict=True))
        cls = _tightest(classes.NEAR_GAP, gap)
        if cls is not None:
            out.append({"kind": "place_relative", "a": x.ref, "b": ic, "relation": "near", "distance": cls})
    return out


def _pairs(task: PcbTask, geo: BoardGeometry) -> list[dict]:
    routed = {n for n, pins in task.nets.items() if len(pins) > 1}
    out = []
    for p in sorted(routed):
        for sp, sn in PAIR_SUFFIXES:
            if p.endswith(sp) and (n := p[: len(p) - len(sp)] + sn) in routed:
                for tol in classes.CLASSES:
                    rel = {"kind": "diff_pair", "p": p, "n": n, "tolerance": tol}
                    if check_relations(task, PcbAction.model_validate({"relations": [rel]}), geo)[0].passed:
                        out.append(rel)
                        break
                break
    return out


def derive(board_dir: Path, name: str | None = None) -> dict[str, Any]:
    """The compact task document for the board in ``board_dir`` (``board.kicad_pcb``, ``SOURCE.md``)."""
    name = name or board_dir.name
    path = board_dir / "board.kicad_pcb"
    kb = read_board(path)
    source = read_source(board_dir)
    source |= {"format": f"{KICAD_FORMATS.get(kb.version, 'KiCad')} ({kb.version})",
               "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    rules = _rules(kb)
    board = board_facts(kb, rules)
    anchors = _anchors(kb)
    every = PcbTask(f"{name}_route", "routing", name, "", board, components(kb, [p.ref for p in kb.parts]), True,
                    {"relations": []}, suite="boards")
    art = human_artifact(kb, every.nets)
    geo, problems = BoardGeometry.build(every, art)
    if problems:
        raise ValueError(f"{name}: the human layout does not rebuild: {problems[0].message}")
    movable = {p.ref for p in kb.parts} - anchors
    placement = _decouples(every, geo, movable) + _crystals(every, geo, movable)
    pairs = _pairs(every, geo)
    verdicts, _ = drc(every, geo)
    wirelength = sum(math.dist(a, b) for t in kb.tracks for a, b in zip(t.points, t.points[1:], strict=False))
    doc_tasks = [
        {"name": f"{name}_route", "category": "routing", "placed": "all", "route": True, "relations": pairs},
        {"name": f"{name}_place", "category": "placement", "placed": "anchors", "route": False,
         "relations": placement},
        {"name": f"{name}_combo", "category": "combined", "placed": "anchors", "route": True,
         "relations": placement + pairs},
    ]
    shared = Counter(r["pin"] for r in placement if r["kind"] == "decouple")
    pin = next((p for p, k in shared.most_common() if k >= 2), None)
    if pin is not None:
        start = [dict(r, distance="tight") if r.get("pin") == pin else r for r in placement]
        if start != placement:
            doc_tasks.append({"name": f"{name}_repair", "category": "repair", "placed": "anchors", "route": False,
                              "relations": placement, "start": start})
    lands: dict[str, dict] = {}
    keys: dict[str, str] = {}
    for p in kb.parts:
        data = footprint_to_data(p.land) | {"description": ""}  # the geometry is the fact; descriptions are bulk
        key = next((k for k, d in lands.items() if k.split("#")[0] == p.lib_id and d == data), None)
        if key is None:
            twins = sum(k.split("#")[0] == p.lib_id for k in lands)
            key = f"{p.lib_id}#{twins + 1}" if twins else p.lib_id
            lands[key] = data
        keys[p.ref] = key
    return {
        "name": name, "source": source,
        "board": _board_doc(board),
        "human": {"wirelength_mm": round(wirelength, 1), "vias": len(kb.vias), "track_segments": len(art.tracks),
                  "area_mm2": round(board.area, 1), "parts": len(kb.parts), "nets": len(every.nets),
                  "anchors": sorted(anchors),
                  "drc": {v.predicate: int(v.measured or 0) for v in verdicts}},
        "tasks": doc_tasks,
        "footprints": lands,
        "parts": {p.ref: _part_doc(p, keys[p.ref], p.ref in anchors) for p in kb.parts},
    }


def dumps_board(doc: dict[str, Any]) -> str:
    """The document as diff-friendly JSON: one line per board fact, task, land pattern and part."""
    def block(key: str, value: Any, last: bool) -> list[str]:
        end = "" if last else ","
        if isinstance(value, dict) and key in ("board", "footprints", "parts"):
            rows = [f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in value.items()]
            return [f" {json.dumps(key)}: {{", ",\n".join(rows), f" }}{end}"]
        if isinstance(value, list) and key == "tasks":
            rows = [f"  {json.dumps(v, separators=(',', ':'))}" for v in value]
            return [f" {json.dumps(key)}: [", ",\n".join(rows), f" ]{end}"]
        return [f" {json.dumps(key)}: {json.dumps(value)}{end}"]
    keys = list(doc)
    lines = ["{"] + [ln for i, k in enumerate(keys) for ln in block(k, doc[k], i == len(keys) - 1)] + ["}"]
    return "\n".join(lines) + "\n"


def _part_doc(p: KPart, key: str, anchor: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"fp": key, "value": p.value, "at": [p.x, p.y, p.rot], "pins": p.pins}
    if p.side != "top":
        out["side"] = p.side
    if anchor:
        out["anchor"] = True
    return out


def _board_doc(b: Board) -> dict[str, Any]:
    r = b.rules
    return {
        "width": b.width, "height": b.height, "layers": b.layers,
        "outline": [list(p) for p in b.outline], "cutouts": [[list(p) for p in c] for c in b.cutouts],
        "rules": {"clearance": r.clearance, "track_width": r.track_width, "via_drill": r.via_drill,
                  "via_diameter": r.via_diameter, "edge_clearance": r.edge_clearance,
                  "min_annular_ring": r.min_annular_ring,
                  "net_classes": [{"name": c.name, "clearance": c.clearance, "track_width": c.track_width,
                                   "via_diameter": c.via_diameter, "via_drill": c.via_drill, "nets": list(c.nets)}
                                  for c in r.net_classes]},
        "pours": [{"net": z.net, "layers": list(z.layers), "outline": [list(p) for p in z.outline],
                   "priority": z.priority, "clearance": z.clearance, "min_width": z.min_width,
                   "connect": z.connect, "thermal_gap": z.thermal_gap, "thermal_width": z.thermal_width}
                  for z in b.zones],
        "keepouts": [_keepout_doc(r) for r in b.regions],
    }


def _keepout_doc(r: Region) -> dict[str, Any]:
    return {"name": r.name, "outline": [list(p) for p in r.outline()], "layers": list(r.layers),
            "forbid": [k for k, v in (("parts", r.no_parts), ("tracks", r.no_tracks), ("vias", r.no_vias),
                                      ("pours", r.no_pours)) if v]}
