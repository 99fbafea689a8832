"""Land patterns (KiCad's own) and the geometry of a placed part's pads and courtyard.

Footprints are named by KiCad library id (``Resistor_SMD:R_0402_1005Metric``) and their pads, exposed
pads, courtyards, origins and attributes are KiCad's: the quick suite's come from Debian's
``kicad-footprints`` package, imported once into ``data/kicad_footprints.json`` by
``rac-fw pcb import-footprints`` (:mod:`.kicad_lib`); a real board's come from the board file itself
(the land patterns its designer placed). Coordinates are millimetres, x to the right and y *down*
(KiCad's convention); an angle turns counter-clockwise as seen on screen, as KiCad's does.

A part sits at ``(x, y, rot, side)``. ``rot`` is the angle KiCad writes in the board file; a part on
the bottom side is the top-side pattern mirrored top-to-bottom (KiCad's flip: local ``y → -y``, pad
angles negated), so one library pattern serves both sides. Connectors declare the side they open to
(``front``, project knowledge: KiCad's library does not say) so ``board_edge`` can face them outward.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

#: Clearance between the pads' bounding box and a generated courtyard (IPC "nominal" density), for
#: land patterns that carry none of their own.
COURTYARD_MARGIN = 0.25
#: Segments per quarter circle when a round pad edge becomes a polygon.
ARC_STEPS = 4
LIBRARY_FILE = Path(__file__).resolve().parent / "data" / "kicad_footprints.json"
Point = tuple[float, float]


@dataclass(frozen=True)
class PadDef:
    """One pad of a footprint in the library frame (top side): ``name`` is the pin number/name, the
    offset is from the footprint origin, ``w``×``h`` the size in the pad's own frame, ``angle`` the
    pad's turn within the footprint. ``kind`` is KiCad's pad type: ``smd``/``connect`` pads are copper on
    ``side`` only, ``thru_hole`` pads on every copper layer, ``np_thru_hole`` is a bare hole (no copper,
    but nothing may come nearer than the clearance)."""

    name: str
    dx: float
    dy: float
    w: float
    h: float
    shape: str = "rect"  # rect | roundrect | circle | oval | trapezoid | custom
    kind: str = "smd"  # smd | connect | thru_hole | np_thru_hole (| paste: a Footprint.apertures entry)
    angle: float = 0.0
    side: str = "F"  # copper side of an smd/connect pad in the library frame: F (top) or B (bottom)
    drill: float = 0.0  # hole diameter (oval hole: its width)
    drill_h: float = 0.0  # oval hole height (0: round hole)
    rratio: float = 0.0  # roundrect corner radius as a fraction of min(w, h)
    outline: tuple[Point, ...] = ()  # custom pads: the copper polygon in the pad frame

    @property
    def through_hole(self) -> bool:
        return self.kind == "thru_hole"


@dataclass(frozen=True)
class Graphic:
    """A silkscreen, fabrication or comment drawing of a land pattern (library frame, top side):
    ``kind`` line | rect (two corners) | circle (centre, a point on it) | arc (start, mid, end) | poly |
    text (at; ``text``), on ``layer`` (F.SilkS, F.Fab, Cmts.User …) with stroke ``width``."""

    kind: str
    layer: str
    points: tuple[Point, ...]
    width: float = 0.1
    text: str = ""
    size: float = 1.0
    filled: bool = False


@dataclass(frozen=True)
class Footprint:
    """A land pattern: ``name`` is its KiCad library id; ``courtyard`` the F.CrtYd polygon (library
    frame); ``attr`` KiCad's attributes as it writes them (``smd`` or ``through_hole`` — empty for a
    mechanical part — then flags such as ``exclude_from_bom``)."""

    name: str
    description: str
    pads: tuple[PadDef, ...]
    courtyard: tuple[Point, ...] = ()
    attr: str = "smd"
    front: str | None = None  # side a connector opens to at rotation 0 ("top" = -y)
    graphics: tuple[Graphic, ...] = ()  # silkscreen and fabrication drawings (written on export)
    apertures: tuple[PadDef, ...] = ()  # paste-only pads (no copper: written on export, nowhere else)

    def pad(self, name: str) -> PadDef | None:
        return next((p for p in self.pads if p.name == name), None)

    @property
    def pin_names(self) -> list[str]:
        """Distinct named pads in order (several pads may share a name, e.g. a shield's tabs)."""
        return list(dict.fromkeys(p.name for p in self.pads if p.name))

    def court(self) -> tuple[Point, ...]:
        """The courtyard polygon: KiCad's, or the pads' bounding box plus the IPC margin."""
        if self.courtyard:
            return self.courtyard
        xs = [x for p in self.pads for x, _ in pad_polygon(p)]
        ys = [y for p in self.pads for _, y in pad_polygon(p)]
        m = COURTYARD_MARGIN
        x0, y0, x1, y1 = min(xs) - m, min(ys) - m, max(xs) + m, max(ys) + m
        return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))

    def extent(self) -> tuple[float, float, float, float]:
        """Courtyard bounding box at rotation 0: (xmin, ymin, xmax, ymax)."""
        pts = self.court()
        return min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts)


# --- transforms -------------------------------------------------------------------------------------------
def rotate(dx: float, dy: float, rot: float) -> Point:
    """Turn an offset by ``rot`` degrees counter-clockwise on screen (y down); exact at multiples of 90."""
    r = rot % 360
    if r == 0:
        return dx, dy
    if r == 90:
        return dy, -dx
    if r == 180:
        return -dx, -dy
    if r == 270:
        return -dy, dx
    c, s = math.cos(math.radians(r)), math.sin(math.radians(r))
    return dx * c + dy * s, -dx * s + dy * c


def to_board(u: float, v: float, x: float, y: float, rot: float, side: str) -> Point:
    """A library-frame point of a part at ``(x, y, rot, side)`` in board coordinates."""
    dx, dy = rotate(u, -v if side == "bottom" else v, rot)
    return x + dx, y + dy


def facing_rotation(fp: Footprint, side: str) -> int:
    """The rotation that turns connector ``fp``'s opening toward board edge ``side``."""
    order = {"top": 0, "left": 90, "bottom": 180, "right": 270}
    return (order[side] - order[fp.front or "top"]) % 360


def row_axis(fp: Footprint) -> str | None:
    """``x`` or ``y`` for a through-hole single-row part (a pin header, a terminal block): every pad a
    plated hole, their centres on one line of the library frame; None for anything else."""
    pads = [p for p in fp.pads if p.kind == "thru_hole" and p.name]
    if len(pads) < 2 or len(pads) != sum(p.kind != "np_thru_hole" for p in fp.pads):
        return None
    if all(abs(p.dx - pads[0].dx) < 1e-6 for p in pads):
        return "y"
    if all(abs(p.dy - pads[0].dy) < 1e-6 for p in pads):
        return "x"
    return None


def edge_rotations(fp: Footprint, side: str) -> list[int]:
    """The rotations at which part ``fp`` meets ``board_edge`` on ``side``: a connector with an opening
    faces the edge; a single-row part lies along it (its row parallel to the edge); anything else may
    take any quarter turn."""
    if fp.front is not None:
        return [facing_rotation(fp, side)]
    axis = row_axis(fp)
    if axis is None:
        return [0, 90, 180, 270]
    along = "y" if side in ("left", "right") else "x"
    return [0, 180] if axis == along else [90, 270]


def _arc(cx: float, cy: float, r: float, a0: float, a1: float) -> list[Point]:
    steps = max(1, round(abs(a1 - a0) / 90 * ARC_STEPS))
    return [(cx + r * math.cos(math.radians(a0 + (a1 - a0) * k / steps)),
             cy + r * math.sin(math.radians(a0 + (a1 - a0) * k / steps))) for k in range(steps + 1)]


def pad_shape(shape: str, w: float, h: float, rratio: float = 0.0, outline: tuple[Point, ...] = ()) -> list[Point]:
    """A pad's copper outline in its own frame, centred on its anchor (round edges as short chords)."""
    if shape == "custom" and outline:
        return list(outline)
    if shape == "circle" or (shape == "oval" and math.isclose(w, h)):
        return _arc(0, 0, w / 2, 0, 360)[:-1]
    if shape == "oval":
        r = min(w, h) / 2
        if w > h:
            return _arc(w / 2 - r, 0, r, -90, 90) + _arc(-w / 2 + r, 0, r, 90, 270)
        return _arc(0, h / 2 - r, r, 0, 180) + _arc(0, -h / 2 + r, r, 180, 360)
    if shape == "roundrect" and rratio > 0:
        r = min(w, h) * min(rratio, 0.5)
        x, y = w / 2 - r, h / 2 - r
        return (_arc(x, y, r, 0, 90) + _arc(-x, y, r, 90, 180) + _arc(-x, -y, r, 180, 270)
                + _arc(x, -y, r, 270, 360))
    return [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]


def pad_polygon(p: PadDef) -> list[Point]:
    """Pad ``p``'s outline in the footprint's library frame."""
    out = []
    for u, v in pad_shape(p.shape, p.w, p.h, p.rratio, p.outline):
        du, dv = rotate(u, v, p.angle)
        out.append((p.dx + du, p.dy + dv))
    return out


# --- placed geometry ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlacedPad:
    """A pad in board coordinates. ``w``×``h`` is its extent along x and y when it is axis-aligned
    (``tilt`` 0, nearly every pad); ``tilt`` is the remaining turn of a pad at another angle, whose
    exact shape :meth:`outline` gives. ``layers`` says which copper it is on: ``F``/``B`` (one side) or
    ``*`` (every layer: through-hole pads and bare holes)."""

    ref: str
    pin: str
    net: str | None
    cx: float
    cy: float
    w: float
    h: float
    drill: float
    shape: str = "rect"
    kind: str = "smd"
    layers: str = "F"
    tilt: float = 0.0
    drill_h: float = 0.0
    rratio: float = 0.0
    points: tuple[Point, ...] = field(default=(), compare=False)

    @property
    def through_hole(self) -> bool:
        """Copper on every layer around a plated hole."""
        return self.kind == "thru_hole"

    @property
    def hole_only(self) -> bool:
        """A bare (non-plated) hole: no copper, but an obstacle on every layer."""
        return self.kind == "np_thru_hole"

    @property
    def round(self) -> bool:
        return self.shape == "circle" or (self.shape == "oval" and math.isclose(self.w, self.h))

    def on(self, layer_names: tuple[str, ...]) -> tuple[str, ...]:
        """The copper layers (of ``layer_names``, top first) this pad occupies."""
        if self.layers == "*":
            return layer_names
        return (layer_names[0],) if self.layers == "F" else (layer_names[-1],)

    def outline(self) -> tuple[Point, ...]:
        """The exact copper (or hole) outline in board coordinates."""
        return self.points

    def core(self) -> tuple[tuple[float, float, float, float], float]:
        """(rectangle, radius) whose Minkowski sum is the pad: exact for axis-aligned rectangles,
        rounded rectangles, ovals and circles, so rectangle arithmetic gives true pad-to-pad gaps;
        other pads: their bounding box and radius 0."""
        if self.tilt or self.shape not in ("rect", "roundrect", "circle", "oval"):
            return self.bbox(), 0.0
        r = {"rect": 0.0, "circle": self.w / 2, "oval": min(self.w, self.h) / 2}.get(
            self.shape, min(self.w, self.h) * min(self.rratio, 0.5))
        hw, hh = self.w / 2 - r, self.h / 2 - r
        return (self.cx - hw, self.cy - hh, self.cx + hw, self.cy + hh), r

    def bbox(self) -> tuple[float, float, float, float]:
        xs = [p[0] for p in self.points]
        ys = [p[1] for p in self.points]
        return min(xs), min(ys), max(xs), max(ys)


def placed_pads(ref: str, fp: Footprint, x: float, y: float, rot: float, nets: dict[str, str],
                side: str = "top") -> list[PlacedPad]:
    """The pads of part ``ref`` at ``(x, y, rot, side)``; ``nets`` maps pin name → net name."""
    out = []
    flip = side == "bottom"
    for p in fp.pads:
        cx, cy = to_board(p.dx, p.dy, x, y, rot, side)
        absolute = (rot - p.angle) if flip else (rot + p.angle)
        quarter = round(absolute / 90) * 90
        tilt = round(absolute - quarter, 6)
        w, h = (p.h, p.w) if quarter % 180 else (p.w, p.h)
        shape = pad_shape(p.shape, p.w, p.h, p.rratio, p.outline)
        pts = tuple((round(cx + du, 5), round(cy + dv, 5))
                    for du, dv in (rotate(u, -v if flip else v, absolute) for u, v in shape))
        layers = "*" if p.kind in ("thru_hole", "np_thru_hole") else (
            p.side if not flip else ("B" if p.side == "F" else "F"))
        out.append(PlacedPad(ref, p.name, nets.get(p.name) if p.name else None, round(cx, 5), round(cy, 5), w, h,
                             p.drill, p.shape, p.kind, layers, tilt, p.drill_h, p.rratio, pts))
    return out


def courtyard_polygon(fp: Footprint, x: float, y: float, rot: float, side: str = "top") -> list[Point]:
    """The courtyard outline of a placed part in board coordinates."""
    return [to_board(u, v, x, y, rot, side) for u, v in fp.court()]


def courtyard(fp: Footprint, x: float, y: float, rot: float, side: str = "top") -> tuple[float, float, float, float]:
    """Bounding rectangle of a placed part's courtyard in board coordinates."""
    pts = courtyard_polygon(fp, x, y, rot, side)
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


# --- the compact data format (library file and real-board task data share it) ------------------------
_PAD_DEFAULTS = {"shape": "rect", "kind": "smd", "angle": 0.0, "side": "F", "drill": 0.0, "drill_h": 0.0,
                 "rratio": 0.0}


def footprint_to_data(fp: Footprint) -> dict[str, Any]:
    pads = []
    for p in fp.pads:
        d: dict[str, Any] = {"name": p.name, "at": [p.dx, p.dy], "size": [p.w, p.h]}
        for k, default in _PAD_DEFAULTS.items():
            if getattr(p, k) != default:
                d[k] = getattr(p, k)
        if p.outline:
            d["outline"] = [list(pt) for pt in p.outline]
        pads.append(d)
    out: dict[str, Any] = {"description": fp.description, "attr": fp.attr, "pads": pads}
    if fp.courtyard:
        out["courtyard"] = [list(pt) for pt in fp.courtyard]
    if fp.front:
        out["front"] = fp.front
    if fp.apertures:
        out["apertures"] = [{"name": p.name, "at": [p.dx, p.dy], "size": [p.w, p.h], "shape": p.shape,
                             "rratio": p.rratio} for p in fp.apertures]
    if fp.graphics:
        out["graphics"] = [{"k": g.kind, "l": g.layer, "p": [list(pt) for pt in g.points], "w": g.width,
                            **({"t": g.text, "s": g.size} if g.kind == "text" else {}),
                            **({"f": 1} if g.filled else {})} for g in fp.graphics]
    return out


def footprint_from_data(name: str, d: dict[str, Any]) -> Footprint:
    pads = tuple(PadDef(p["name"], p["at"][0], p["at"][1], p["size"][0], p["size"][1],
                        **{k: p.get(k, default) for k, default in _PAD_DEFAULTS.items()},
                        outline=tuple((float(u), float(v)) for u, v in p.get("outline", ())))
                 for p in d["pads"])
    apertures = tuple(PadDef(p["name"], p["at"][0], p["at"][1], p["size"][0], p["size"][1], p["shape"], "paste",
                             rratio=p["rratio"]) for p in d.get("apertures", ()))
    graphics = tuple(Graphic(g["k"], g["l"], tuple((float(x), float(y)) for x, y in g["p"]), g["w"], g.get("t", ""),
                             g.get("s", 1.0), bool(g.get("f"))) for g in d.get("graphics", ()))
    court = tuple((float(u), float(v)) for u, v in d.get("courtyard", ()))
    return Footprint(name, d.get("description", ""), pads, court, d.get("attr", "smd"), d.get("front"), graphics,
                     apertures)


@cache
def library_data() -> dict[str, Any]:
    """The imported library file: ``source`` (package, version, licence) and ``footprints``."""
    return json.loads(LIBRARY_FILE.read_text(encoding="utf-8"))


@cache
def library() -> dict[str, Footprint]:
    """Every imported KiCad footprint by library id."""
    return {name: footprint_from_data(name, d) for name, d in library_data()["footprints"].items()}


@cache
def scaled(fp: Footprint, factor: float) -> Footprint:
    """``fp`` with every pad offset, pad size, hole and the courtyard scaled by ``factor`` (the
    robustness study's footprint shrink)."""
    pads = tuple(replace(p, dx=p.dx * factor, dy=p.dy * factor, w=p.w * factor, h=p.h * factor,
                         drill=p.drill * factor, drill_h=p.drill_h * factor,
                         outline=tuple((u * factor, v * factor) for u, v in p.outline)) for p in fp.pads)
    court = tuple((u * factor, v * factor) for u, v in fp.court())
    return replace(fp, description=f"{fp.description} (scaled ×{factor})", pads=pads, courtyard=court)
