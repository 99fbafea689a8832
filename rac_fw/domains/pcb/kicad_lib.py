"""Read KiCad land patterns — library ``.kicad_mod`` files and footprints placed in a ``.kicad_pcb`` —
into :class:`~.footprints.Footprint`, and write the project's library file from Debian's
``kicad-footprints`` package (``rac-fw pcb import-footprints``).

A footprint inside a board file is stored *as placed*: pad angles include the part's rotation and a
part on the bottom is mirrored (local ``y → -y``, pad angles negated, its courtyard on ``B.CrtYd``).
:func:`footprint_from_node` undoes both, so a board's land pattern and the library's compare equal
and one pattern serves either side (:func:`.footprints.placed_pads` re-applies the placement).
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from shapely import LineString, Point, Polygon, box, unary_union
from shapely.geometry.base import BaseGeometry
from shapely.ops import polygonize

from rac_fw.domains.pcb.footprints import Footprint, Graphic, PadDef, footprint_to_data
from rac_fw.domains.pcb.sexpr import Node, parse

DEFAULT_LIBRARY = Path("/usr/share/kicad/footprints")
DEBIAN_PACKAGE = "kicad-footprints"
LICENCE = ("CC-BY-SA-4.0 with the KiCad libraries exception: footprints used in a design (and files made "
           "from them) carry no obligation; https://www.kicad.org/libraries/license/")
#: The side each library connector opens to at rotation 0 (project knowledge; KiCad's data does not say).
CONNECTOR_FRONT = {"Connector_USB:USB_C_Receptacle_HRO_TYPE-C-31-M-12": "bottom"}
COPPER = ("*.Cu", "F.Cu", "B.Cu", "F&B.Cu")
DRAWING_LAYERS = ("F.SilkS", "F.Fab", "F.CrtYd", "Cmts.User", "Dwgs.User")


class LibraryError(ValueError):
    """A library id that the installed library does not hold, or a library that is not installed."""


def _r(v: float) -> float:
    return round(v, 5) + 0.0  # + 0.0 turns -0.0 into 0.0


def _angle(v: float) -> float:
    a = round(v % 360, 4)
    return 0.0 if a == 360 else a


def _pts(node: Node) -> list[tuple[float, float]]:
    pts = node.first("pts")
    out = []
    for item in pts.args if pts is not None else []:
        if isinstance(item, Node) and item.name == "xy":
            out.append((float(item.atom(0)), float(item.atom(1))))
        elif isinstance(item, Node) and item.name == "arc":
            out += _arc_points(item)
    return out


def _arc_points(node: Node) -> list[tuple[float, float]]:
    """Start, mid, end of a three-point arc → a polyline (KiCad 6+ arcs are three-point)."""
    s, m, e = node.xy("start"), node.xy("mid"), node.xy("end")
    if s is None or e is None:
        return []
    if m is None:
        return [s, e]
    ax, ay = s
    bx, by = m
    cx, cy = e
    d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    if abs(d) < 1e-12:
        return [s, e]
    ux = ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay) + (cx * cx + cy * cy) * (ay - by)) / d
    uy = ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx) + (cx * cx + cy * cy) * (bx - ax)) / d
    r = math.hypot(ax - ux, ay - uy)
    a0, a1, am = (math.atan2(p[1] - uy, p[0] - ux) for p in (s, e, m))
    sweep = (a1 - a0) % (2 * math.pi)
    if (am - a0) % (2 * math.pi) > sweep:  # the mid point lies on the other way round
        sweep -= 2 * math.pi
    steps = max(2, int(abs(sweep) / (math.pi / 16)))
    return [(ux + r * math.cos(a0 + sweep * k / steps), uy + r * math.sin(a0 + sweep * k / steps))
            for k in range(steps + 1)]


def graphic_geometry(item: Node, closed: bool) -> tuple[BaseGeometry | None, list[LineString]]:
    """A graphic item (``fp_*``/``gr_*``): (an area when it is a closed shape, its lines otherwise)."""
    kind = item.name.split("_", 1)[1]
    if kind == "line":
        s, e = item.xy("start"), item.xy("end")
        return None, [LineString([s, e])] if s and e and s != e else []
    if kind == "arc":
        pts = _arc_points(item)
        return None, [LineString(pts)] if len(pts) > 1 else []
    if kind == "rect":
        s, e = item.xy("start"), item.xy("end")
        if s and e:
            return box(min(s[0], e[0]), min(s[1], e[1]), max(s[0], e[0]), max(s[1], e[1])), []
    if kind == "circle":
        c, e = item.xy("center"), item.xy("end")
        if c and e:
            return Point(c).buffer(math.hypot(e[0] - c[0], e[1] - c[1]), quad_segs=8), []
    if kind == "poly":
        pts = _pts(item)
        if len(pts) >= 3:
            return Polygon(pts).buffer(0), []
    return None, []


def outline_of(items: Iterable[Node]) -> BaseGeometry | None:
    """The area enclosed by graphic items: closed shapes as they are, lines and arcs chained into loops."""
    areas: list[BaseGeometry] = []
    lines: list[LineString] = []
    for item in items:
        area, ls = graphic_geometry(item, closed=True)
        if area is not None and not area.is_empty:
            areas.append(area)
        lines += ls
    if lines:
        merged = unary_union([LineString([(round(x, 4), round(y, 4)) for x, y in ln.coords]) for ln in lines])
        areas += list(polygonize(merged))
        if not areas:  # open outline: the region its lines span
            areas.append(merged.convex_hull)
    if not areas:
        return None
    return unary_union(areas)


def _courtyard(node: Node, flipped: bool) -> tuple[tuple[float, float], ...]:
    layer = "B.CrtYd" if flipped else "F.CrtYd"
    items = [g for g in node.args if isinstance(g, Node) and g.name.startswith("fp_") and g.value("layer") == layer]
    area = outline_of(items)
    if area is None or area.is_empty or area.area <= 0:
        return ()
    shape = area if isinstance(area, Polygon) else area.convex_hull
    if not isinstance(shape, Polygon):
        return ()
    pts = list(shape.exterior.coords)[:-1]
    return tuple((_r(x), _r(-y if flipped else y)) for x, y in pts)


def _custom_outline(pad: Node, w: float, h: float, flipped: bool) -> tuple[tuple[float, float], ...]:
    """A custom pad's copper in its own frame: the anchor plus its primitives."""
    options = pad.first("options")
    anchor = options.value("anchor", "rect") if options is not None else "rect"
    parts: list[BaseGeometry] = [Point(0, 0).buffer(w / 2, quad_segs=8) if anchor == "circle"
                                 else box(-w / 2, -h / 2, w / 2, h / 2)]
    prims = pad.first("primitives")
    for item in prims.args if prims is not None else []:
        if not isinstance(item, Node):
            continue
        stroke = item.first("stroke")
        width = item.number("width", 0.0) or (stroke.number("width", 0.0) if stroke is not None else 0.0)
        area, lines = graphic_geometry(item, closed=True)
        if area is not None:
            parts.append(area.buffer(width / 2) if width > 0 else area)
        parts += [ln.buffer(max(width, 1e-3) / 2) for ln in lines]
    shape = unary_union(parts)
    outline = shape if isinstance(shape, Polygon) else shape.convex_hull
    pts = list(outline.simplify(0.005).exterior.coords)[:-1]
    return tuple((_r(x), _r(-y if flipped else y)) for x, y in pts)


def pad_from_node(pad: Node, fp_angle: float, flipped: bool) -> PadDef | None:
    """One pad in the library frame; a paste-only pad has kind ``paste`` (None: any other pad without
    copper or hole, e.g. mask only)."""
    name = pad.atom(0)
    kind, shape = pad.atom(1), pad.atom(2)
    layers = pad.first("layers")
    names = layers.atoms() if layers is not None else []
    if kind != "np_thru_hole" and not any(n in COPPER or n.endswith(".Cu") for n in names):
        if kind != "smd" or not any(n.endswith(".Paste") for n in names):
            return None
        kind = "paste"
    at = pad.first("at")
    if at is None:
        return None
    a = at.atoms()
    lx, ly = float(a[0]), float(a[1])
    file_angle = float(a[2]) if len(a) > 2 else 0.0
    size = pad.first("size")
    w, h = (float(size.atom(0)), float(size.atom(1))) if size is not None else (0.0, 0.0)
    angle = (fp_angle - file_angle) if flipped else (file_angle - fp_angle)
    drill = pad.first("drill")
    d0 = dh = 0.0
    if drill is not None:
        nums = [x for x in drill.atoms() if x != "oval"]
        d0 = float(nums[0]) if nums else 0.0
        if "oval" in drill.atoms() and len(nums) > 1:
            dh = float(nums[1])
    side = "F"
    if kind in ("smd", "connect", "paste"):
        top = any(n in ("F.Cu", "*.Cu", "F&B.Cu", "F.Paste") for n in names)
        side = "F" if top != flipped else "B"
    outline = _custom_outline(pad, w, h, flipped) if shape == "custom" else ()
    return PadDef(name, _r(lx), _r(-ly if flipped else ly), _r(w), _r(h), shape, kind, _angle(angle), side, _r(d0),
                  _r(dh), _r(pad.number("roundrect_rratio", 0.0)) if shape == "roundrect" else 0.0, outline)


def footprint_from_node(node: Node, name: str | None = None, drawings: bool = True) -> Footprint:
    """A ``(footprint …)``/``(module …)`` node — from a ``.kicad_mod`` or placed in a board — in the
    library frame (``drawings=False``: copper, holes and courtyard only, as the real-board data keeps
    them; silkscreen, fabrication drawings and paste apertures are left out)."""
    lib_id = name or node.atom(0)
    at = node.first("at")
    fp_angle = float(at.atom(2, "0")) if at is not None else 0.0
    flipped = node.value("layer") == "B.Cu"
    every = [p for p in (pad_from_node(n, fp_angle, flipped) for n in node.all("pad")) if p is not None]
    attr = node.first("attr")
    kind = " ".join(attr.atoms()) if attr is not None else ""  # smd | through_hole | … and exclusion flags
    return Footprint(lib_id, node.value("descr"), tuple(p for p in every if p.kind != "paste"),
                     _courtyard(node, flipped), kind, CONNECTOR_FRONT.get(lib_id),
                     _graphics(node, flipped) if drawings else (),
                     tuple(p for p in every if p.kind == "paste") if drawings else ())


def _graphics(node: Node, flipped: bool) -> tuple[Graphic, ...]:
    """Silkscreen, fabrication and comment drawings in the library frame (a bottom part's mirrored back)."""
    out = []
    for g in node.args:
        if not isinstance(g, Node) or not g.name.startswith("fp_"):
            continue
        layer = g.value("layer")
        if flipped:
            layer = {"B.SilkS": "F.SilkS", "B.Fab": "F.Fab", "B.CrtYd": "F.CrtYd"}.get(layer, layer)
        if layer not in DRAWING_LAYERS:
            continue
        kind = g.name[3:]
        if kind == "text":
            if g.atom(0) != "user":
                continue
            at = g.xy("at")
            font = next((f for f in g.walk() if f.name == "size"), None)
            pts: list[tuple[float, float]] = [at] if at else []
            text, size = g.atom(1), float(font.atom(0)) if font is not None else 1.0
        else:
            keys = {"line": ("start", "end"), "rect": ("start", "end"), "circle": ("center", "end"),
                    "arc": ("start", "mid", "end")}.get(kind)
            pts = [p for k in keys if (p := g.xy(k)) is not None] if keys else _pts(g) if kind == "poly" else []
            text, size = "", 1.0
        stroke = g.first("stroke")
        width = g.number("width", 0.0) or (stroke.number("width", 0.1) if stroke is not None else 0.1)
        if pts:
            out.append(Graphic(kind, layer, tuple((_r(x), _r(-y if flipped else y)) for x, y in pts), _r(width),
                               text, size, g.value("fill") == "solid"))
    return tuple(out)


def read_library_footprint(lib_id: str, library: Path = DEFAULT_LIBRARY) -> Footprint:
    nick, _, fp_name = lib_id.partition(":")
    path = library / f"{nick}.pretty" / f"{fp_name}.kicad_mod"
    if not path.is_file():
        raise LibraryError(f"{lib_id}: {path} does not exist (is Debian's {DEBIAN_PACKAGE} installed?)")
    return footprint_from_node(parse(path.read_text(encoding="utf-8")), lib_id)


def package_version(package: str = DEBIAN_PACKAGE) -> str | None:
    """The installed Debian package's version (None when dpkg does not know it)."""
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def library_document(lib_ids: Iterable[str], library: Path = DEFAULT_LIBRARY) -> dict[str, Any]:
    """The project's library file: the named footprints read from ``library``, with their source."""
    if not library.is_dir():
        raise LibraryError(f"{library} is not a KiCad footprint library (apt-get install {DEBIAN_PACKAGE})")
    fps = {i: footprint_to_data(read_library_footprint(i, library)) for i in sorted(set(lib_ids))}
    return {"source": {"package": f"Debian {DEBIAN_PACKAGE}", "version": package_version(),
                       "path": str(library), "licence": LICENCE},
            "footprints": fps}


def dumps(doc: dict[str, Any], table: str = "footprints") -> str:
    """Compact, diff-friendly JSON: each entry of ``doc[table]`` (a mapping) on a line of its own."""
    lines = ["{"]
    items = [(k, v) for k, v in doc.items() if k != table]
    for k, v in items:
        lines.append(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},")
    entries = list(doc.get(table, {}).items())
    lines.append(f" {json.dumps(table)}: {{")
    for i, (k, v) in enumerate(entries):
        sep = "," if i + 1 < len(entries) else ""
        lines.append(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False, separators=(',', ':'))}{sep}")
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"
