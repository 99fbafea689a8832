"""Read a KiCad 6, 7 or 8 ``.kicad_pcb`` into plain data: outline, copper layers, nets, parts with their
land patterns and placements, pours, rule areas, and the designer's copper (tracks, arcs, vias, filled
pours) for measuring the human layout.

Coordinates are moved so the outline's bounding box starts at (0, 0) (the project's boards start
there; KiCad's sheet origin is arbitrary). Net names become the project's identifiers (see
:func:`net_ids`); the KiCad name of each is kept. Everything version-specific (``fp_text`` vs
``property``, ``(layer …)`` vs ``(layers …)``, bare flags vs ``yes``) is resolved here, once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shapely import LineString, Polygon, unary_union
from shapely.ops import polygonize

from rac_fw.domains.pcb.board import LAYER_NAMES, Region, Zone
from rac_fw.domains.pcb.footprints import Footprint
from rac_fw.domains.pcb.kicad_lib import _arc_points, _pts, footprint_from_node, graphic_geometry
from rac_fw.domains.pcb.sexpr import Node, parse

Point = tuple[float, float]
_ID = re.compile(r"[^A-Za-z0-9_+\-.]+")
REF = re.compile(r"^[A-Za-z_][A-Za-z0-9_+\-]*$")
CONNECT_MODES = {"": "thermal", "yes": "solid", "no": "none", "thru_hole_only": "thru_hole_only"}


class BoardFileError(ValueError):
    """The file is not a KiCad board this reader understands (with what is missing)."""


@dataclass
class KPart:
    ref: str
    lib_id: str
    value: str
    land: Footprint
    x: float
    y: float
    rot: float
    side: str  # top | bottom
    pins: dict[str, str]  # pad name → project net name
    attrs: tuple[str, ...]  # KiCad attribute flags (smd, through_hole, board_only, exclude_from_bom …)


@dataclass
class KTrack:
    net: str
    layer: str
    points: list[Point]  # a segment (two points) or an arc as a polyline
    width: float


@dataclass
class KBoard:
    """One board as read: the facts a task needs, and the designer's copper."""

    version: int
    layers: tuple[str, ...]  # the project's copper layer names, top first
    outline: list[Point]
    cutouts: list[list[Point]]
    width: float
    height: float
    net_names: dict[str, str]  # project name → KiCad name
    parts: list[KPart]
    zones: list[Zone]
    keepouts: list[Region]
    tracks: list[KTrack] = field(default_factory=list)
    vias: list[tuple[str, float, float, float, float]] = field(default_factory=list)  # net, x, y, drill, diameter
    fills: list[tuple[str, str, list[Point]]] = field(default_factory=list)  # net, layer, ring


def net_ids(names: list[str]) -> dict[str, str]:
    """KiCad net name → a project identifier: hierarchy slashes and brackets become ``_``, an overbar
    ``~{X}`` becomes ``nX``, a leading digit gets ``N``; clashes get ``_2``, ``_3`` …"""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        text = re.sub(r"~\{([^}]*)\}", r"n\1", name).lstrip("/")
        text = _ID.sub("_", text).strip("_.") or "NET"
        if text[0].isdigit() or text[0] == ".":
            text = "N" + text
        text = text[:60]
        base, k = text, 2
        while text in used:
            text, k = f"{base}_{k}", k + 1
        used.add(text)
        out[name] = text
    return out


def _field(fp: Node, name: str) -> str:
    """A footprint's reference or value: ``(fp_text reference "R1")`` in KiCad 6/7,
    ``(property "Reference" "R1")`` in KiCad 8."""
    for t in fp.all("fp_text"):
        if t.atom(0) == name:
            return t.atom(1)
    for p in fp.all("property"):
        if p.atom(0) == name.capitalize():
            return p.atom(1)
    return ""


def _zone_layers(z: Node, copper: dict[str, str]) -> tuple[str, ...]:
    names = (z.first("layers") or z.first("layer") or Node("layers")).atoms()
    out: list[str] = []
    for n in names:
        if n in ("*.Cu", "F&B.Cu"):
            out += list(copper.values()) if n == "*.Cu" else [next(iter(copper.values())), list(copper.values())[-1]]
        elif n in copper:
            out.append(copper[n])
    return tuple(dict.fromkeys(out))


def _outline(root: Node) -> tuple[list[Point], list[list[Point]]]:
    """The Edge.Cuts loops: the largest is the outline, the others cut-outs (footprints may draw edges)."""
    items = [g for g in root.args
             if isinstance(g, Node) and g.name.startswith("gr_") and g.value("layer") == "Edge.Cuts"]
    shapes = []
    lines: list[LineString] = []
    for item in items:
        area, ls = graphic_geometry(item, closed=True)
        if area is not None:
            shapes.append(area)
        lines += ls
    for fp in root.all("footprint"):  # edge cuts drawn inside footprints (slots, USB notches)
        at = fp.first("at")
        fx, fy, fr = (float(at.atom(0)), float(at.atom(1)), float(at.atom(2, "0"))) if at is not None else (0, 0, 0)
        for g in fp.args:
            if isinstance(g, Node) and g.name.startswith("fp_") and g.value("layer") == "Edge.Cuts":
                area, ls = graphic_geometry(g, closed=True)
                c, s = math.cos(math.radians(fr)), math.sin(math.radians(fr))
                for ln in ls:
                    lines.append(LineString([(fx + x * c + y * s, fy - x * s + y * c) for x, y in ln.coords]))
    if lines:
        merged = unary_union([LineString([(round(x, 3), round(y, 3)) for x, y in ln.coords]) for ln in lines])
        shapes += list(polygonize(merged))
    polys = sorted((p for p in shapes if isinstance(p, Polygon) and p.area > 0), key=lambda p: -p.area)
    if not polys:
        raise BoardFileError("no closed board outline on Edge.Cuts")
    outer = polys[0]
    cuts = [list(p.exterior.coords)[:-1] for p in polys[1:] if outer.contains(p.representative_point())]
    return list(outer.exterior.coords)[:-1], cuts


def read_board(path: Path) -> KBoard:
    """Read ``path``; a :class:`BoardFileError` says what the file lacks."""
    try:
        root = parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BoardFileError(f"{path}: {exc}") from exc
    if root.name != "kicad_pcb":
        raise BoardFileError(f"{path}: not a KiCad board (top-level list is {root.name!r})")
    version = int(root.value("version", "0"))
    layer_node = root.first("layers")
    file_copper = [n.atom(0) for n in (layer_node.args if layer_node is not None else [])
                   if isinstance(n, Node) and n.atom(0).endswith(".Cu")]
    if len(file_copper) not in LAYER_NAMES:
        raise BoardFileError(f"{path}: {len(file_copper)} copper layers (the model has 2, 4 or 6)")
    ordered = sorted(file_copper, key=lambda n: (n != "F.Cu", n == "B.Cu", n))
    copper = dict(zip(ordered, LAYER_NAMES[len(file_copper)], strict=True))
    outline, cutouts = _outline(root)
    ox, oy = min(x for x, _ in outline), min(y for _, y in outline)

    def mv(pts: list[Point]) -> list[Point]:
        return [(round(x - ox, 4), round(y - oy, 4)) for x, y in pts]

    kicad_nets = {n.atom(0): n.atom(1) for n in root.all("net") if n.atom(1)}
    ids = net_ids(sorted(set(kicad_nets.values())))
    by_code = {code: ids[name] for code, name in kicad_nets.items()}

    def net_of(node: Node) -> str | None:
        n = node.first("net")
        if n is None:
            return None
        a = n.atoms()
        if len(a) > 1:
            return ids.get(a[1])
        return by_code.get(a[0]) if a else None

    parts: list[KPart] = []
    anonymous = 0
    for fp in root.all("footprint"):
        land = footprint_from_node(fp, drawings=False)
        if not land.pads:
            continue  # artwork: no copper, no hole
        ref = _field(fp, "reference")
        if not REF.match(ref):
            anonymous += 1
            ref = f"X{anonymous}"
        pins: dict[str, str] = {}
        for pad in fp.all("pad"):
            net = net_of(pad)
            if pad.atom(0) and net and pad.atom(0) not in pins:
                pins[pad.atom(0)] = net
        at = fp.first("at")
        assert at is not None
        x, y = float(at.atom(0)) - ox, float(at.atom(1)) - oy
        rot = round(float(at.atom(2, "0")) % 360, 4)
        attr = fp.first("attr")
        parts.append(KPart(ref, fp.atom(0), _field(fp, "value"), land, round(x, 4), round(y, 4),
                           0.0 if rot == 360 else rot,
                           "bottom" if fp.value("layer") == "B.Cu" else "top", pins,
                           tuple(attr.atoms()) if attr is not None else ()))
    zones: list[Zone] = []
    keepouts: list[Region] = []
    for z in root.all("zone"):
        layers = _zone_layers(z, copper)
        poly = z.first("polygon")
        pts = mv(_pts(poly)) if poly is not None else []
        if len(pts) < 3 or not layers:
            continue
        keep = z.first("keepout")
        if keep is not None:
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            name = z.value("name") or f"keepout{len(keepouts) + 1}"
            keepouts.append(Region(_ID.sub("_", name).strip("_") or f"keepout{len(keepouts) + 1}", min(xs), min(ys),
                                   max(xs), max(ys), "keepout", "rule area of the original board", tuple(pts),
                                   layers if len(layers) < len(copper) else (),
                                   keep.value("footprints") == "not_allowed", keep.value("tracks") == "not_allowed",
                                   keep.value("vias") == "not_allowed", keep.value("copperpour") == "not_allowed"))
            continue
        net = ids.get(z.value("net_name"), "")
        if not net:
            continue
        cp = z.first("connect_pads")
        fill = z.first("fill")
        mode = next((a for a in (cp.atoms() if cp is not None else []) if a in CONNECT_MODES), "")
        zones.append(Zone(net, layers, tuple(pts), int(z.value("priority", "0")),
                          cp.number("clearance", 0.2) if cp is not None else 0.2, z.number("min_thickness", 0.2),
                          CONNECT_MODES[mode], fill.number("thermal_gap", 0.5) if fill is not None else 0.5,
                          fill.number("thermal_bridge_width", 0.5) if fill is not None else 0.5, z.value("name")))
    board = KBoard(version, tuple(copper.values()), mv(outline), [mv(c) for c in cutouts],
                   round(max(x for x, _ in outline) - ox, 4), round(max(y for _, y in outline) - oy, 4),
                   {v: k for k, v in ids.items()}, parts, zones, keepouts)
    _copper(root, board, copper, net_of, mv)
    return board


def _copper(root: Node, board: KBoard, copper: dict[str, str], net_of: Callable[[Node], str | None],
            mv: Callable[[list[Point]], list[Point]]) -> None:
    """The designer's tracks, arcs, vias and filled pours."""
    for s in root.all("segment"):
        net, lay = net_of(s), copper.get(s.value("layer"))
        start, end = s.xy("start"), s.xy("end")
        if net and lay and start and end:
            board.tracks.append(KTrack(net, lay, mv([start, end]), s.number("width")))
    for a in root.all("arc"):
        net, lay = net_of(a), copper.get(a.value("layer"))
        pts = _arc_points(a)
        if net and lay and len(pts) > 1:
            board.tracks.append(KTrack(net, lay, mv(pts), a.number("width")))
    for v in root.all("via"):
        net, at = net_of(v), v.xy("at")
        if net and at:
            (x, y), = mv([at])
            board.vias.append((net, x, y, v.number("drill"), v.number("size")))
    project_name = {v: k for k, v in board.net_names.items()}
    for z in root.all("zone"):
        if z.first("keepout") is not None:
            continue
        net = project_name.get(z.value("net_name"))
        for fpoly in z.all("filled_polygon"):
            lay = copper.get(fpoly.value("layer")) or (_zone_layers(z, copper) or (None,))[0]
            ring = mv(_pts(fpoly))
            if net and lay and len(ring) >= 3:
                board.fills.append((net, lay, ring))
