"""The project's own land patterns for common packages, and pad geometry of a placed part.

Dimensions are IPC-7351 nominal lands rounded so fine-pitch pad centres fall on the router's 0.25 mm
grid (every 0.5 mm-pitch pad does exactly); coarser pads are wide enough that a grid cell always lies
inside them. Coordinates are millimetres, x to the right and y *down* (KiCad's convention); a rotation
``r`` turns a part counter-clockwise as seen on screen, the way KiCad's footprint angle does.
Connectors declare the side they open to (``front``) so ``board_edge`` can face them outward.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

#: Clearance between the pads' bounding box and the courtyard outline (IPC "nominal" density).
COURTYARD_MARGIN = 0.25


@dataclass(frozen=True)
class PadDef:
    """One pad of a footprint: ``name`` is the pin number/name, offsets from the part origin."""

    name: str
    dx: float
    dy: float
    w: float
    h: float
    drill: float = 0.0  # > 0: plated through-hole pad, present on every copper layer

    @property
    def through_hole(self) -> bool:
        return self.drill > 0


@dataclass(frozen=True)
class Footprint:
    name: str
    description: str
    pads: tuple[PadDef, ...]
    body: tuple[float, float]  # body size (w, h) at rotation 0, centred on the origin
    front: str | None = None  # side a connector opens to at rotation 0 ("top" = -y)

    def pad(self, name: str) -> PadDef | None:
        return next((p for p in self.pads if p.name == name), None)

    def extent(self) -> tuple[float, float, float, float]:
        """Courtyard at rotation 0: (xmin, ymin, xmax, ymax) over pads and body, plus the margin."""
        xs = [v for p in self.pads for v in (p.dx - p.w / 2, p.dx + p.w / 2)] + [-self.body[0] / 2, self.body[0] / 2]
        ys = [v for p in self.pads for v in (p.dy - p.h / 2, p.dy + p.h / 2)] + [-self.body[1] / 2, self.body[1] / 2]
        m = COURTYARD_MARGIN
        return min(xs) - m, min(ys) - m, max(xs) + m, max(ys) + m


def rotate(dx: float, dy: float, rot: int) -> tuple[float, float]:
    """Turn an offset by ``rot`` degrees (a multiple of 90) counter-clockwise on screen (y down)."""
    r = rot % 360
    if r == 0:
        return dx, dy
    if r == 90:
        return dy, -dx
    if r == 180:
        return -dx, -dy
    return -dy, dx


def rotate_size(w: float, h: float, rot: int) -> tuple[float, float]:
    return (h, w) if rot % 180 else (w, h)


#: Rotation that makes a connector whose front is ``top`` at rotation 0 face each side.
FACING = {"top": 0, "left": 90, "bottom": 180, "right": 270}


def _two_pad(name: str, desc: str, pitch: float, w: float, h: float, body: tuple[float, float]) -> Footprint:
    return Footprint(name, desc, (PadDef("1", -pitch / 2, 0, w, h), PadDef("2", pitch / 2, 0, w, h)), body)


def _quad(name: str, desc: str, per_side: int, row: float, pad_len: float, pad_w: float,
          body: float) -> Footprint:
    """QFN/QFP: pin 1 at the top of the left side, numbered counter-clockwise, 0.5 mm pitch."""
    offsets = [(i - (per_side - 1) / 2) * 0.5 for i in range(per_side)]
    pads: list[PadDef] = []
    n = 1
    for o in offsets:  # left, top to bottom
        pads.append(PadDef(str(n), -row, o, pad_len, pad_w))
        n += 1
    for o in offsets:  # bottom, left to right
        pads.append(PadDef(str(n), o, row, pad_w, pad_len))
        n += 1
    for o in reversed(offsets):  # right, bottom to top
        pads.append(PadDef(str(n), row, o, pad_len, pad_w))
        n += 1
    for o in reversed(offsets):  # top, right to left
        pads.append(PadDef(str(n), o, -row, pad_w, pad_len))
        n += 1
    return Footprint(name, desc, tuple(pads), (body, body))


def _header(n: int) -> Footprint:
    pitch = 2.54
    pads = tuple(PadDef(str(i + 1), 0.0, (i - (n - 1) / 2) * pitch, 1.7, 1.7, drill=1.0) for i in range(n))
    return Footprint(f"PinHeader_1x{n:02d}_P2.54mm", f"1x{n} pin header, 2.54 mm pitch, through-hole", pads,
                     (2.54, n * pitch))


def _soic8() -> Footprint:
    ys = (-1.905, -0.635, 0.635, 1.905)
    pads = [PadDef(str(i + 1), -2.5, y, 1.8, 0.6) for i, y in enumerate(ys)]
    pads += [PadDef(str(i + 5), 2.5, y, 1.8, 0.6) for i, y in enumerate(reversed(ys))]
    return Footprint("SOIC-8_3.9x4.9mm_P1.27mm", "SOIC-8, 1.27 mm pitch", tuple(pads), (3.9, 4.9))


def _usb_c() -> Footprint:
    names = ("GND", "VBUS", "CC1", "DP", "DN", "CC2")
    pads = tuple(PadDef(nm, (i - 2.5) * 1.0, 1.5, 0.5, 1.2) for i, nm in enumerate(names))
    return Footprint("USB_C_Receptacle_6P", "USB-C receptacle, power + USB 2.0 data (simplified: 6 SMD pads, "
                     "1.0 mm pitch, at the rear), opening at the top", pads, (8.9, 3.5), front="top")


@cache
def library() -> dict[str, Footprint]:
    """Every built-in footprint by name."""
    fps = [
        _two_pad("R_0402_1005Metric", "0402 resistor", 1.0, 0.5, 0.55, (1.0, 0.5)),
        _two_pad("C_0402_1005Metric", "0402 capacitor", 1.0, 0.5, 0.55, (1.0, 0.5)),
        _two_pad("R_0603_1608Metric", "0603 resistor", 1.5, 0.8, 0.9, (1.6, 0.8)),
        _two_pad("C_0603_1608Metric", "0603 capacitor", 1.5, 0.8, 0.9, (1.6, 0.8)),
        _two_pad("LED_0603_1608Metric", "0603 LED (pin 1 cathode)", 1.5, 0.8, 0.9, (1.6, 0.8)),
        _two_pad("R_0805_2012Metric", "0805 resistor", 2.0, 1.0, 1.3, (2.0, 1.25)),
        _two_pad("C_0805_2012Metric", "0805 capacitor", 2.0, 1.0, 1.3, (2.0, 1.25)),
        Footprint("SOT-23", "SOT-23 (pins 1, 2 bottom; 3 top)",
                  (PadDef("1", -1.0, 1.0, 0.6, 0.7), PadDef("2", 1.0, 1.0, 0.6, 0.7), PadDef("3", 0.0, -1.0, 0.6, 0.7)),
                  (1.4, 2.9)),
        _soic8(),
        _quad("QFN-32_5x5mm_P0.5mm", "QFN-32 5x5 mm, 0.5 mm pitch (no exposed pad)", 8, 2.5, 0.8, 0.25, 5.0),
        _quad("QFN-48_7x7mm_P0.5mm", "QFN-48 7x7 mm, 0.5 mm pitch (no exposed pad)", 12, 3.5, 0.8, 0.25, 7.0),
        _quad("TQFP-48_7x7mm_P0.5mm", "TQFP-48 7x7 mm body, 0.5 mm pitch", 12, 4.25, 1.2, 0.3, 7.0),
        _quad("TQFP-64_10x10mm_P0.5mm", "TQFP-64 10x10 mm body, 0.5 mm pitch", 16, 5.75, 1.2, 0.3, 10.0),
        *(_header(n) for n in range(2, 9)),
        _usb_c(),
        Footprint("Crystal_SMD_3225-4Pin_3.2x2.5mm", "3.2x2.5 mm crystal (pins 1, 3 crystal; 2, 4 ground)",
                  (PadDef("1", -1.1, 0.8, 1.4, 1.2), PadDef("2", 1.1, 0.8, 1.4, 1.2),
                   PadDef("3", 1.1, -0.8, 1.4, 1.2), PadDef("4", -1.1, -0.8, 1.4, 1.2)), (3.2, 2.5)),
    ]
    return {fp.name: fp for fp in fps}


@cache
def scaled(name: str, factor: float) -> Footprint:
    """Footprint ``name`` with every pad offset, pad size and the body scaled by ``factor`` (the
    robustness study's footprint shrink); the courtyard margin stays the IPC one."""
    fp = library()[name]
    pads = tuple(PadDef(p.name, p.dx * factor, p.dy * factor, p.w * factor, p.h * factor, p.drill * factor)
                 for p in fp.pads)
    return Footprint(fp.name, f"{fp.description} (scaled ×{factor})", pads,
                     (fp.body[0] * factor, fp.body[1] * factor), fp.front)


@dataclass(frozen=True)
class PlacedPad:
    """A pad in board coordinates (axis-aligned rectangle, or a circle for round TH pads)."""

    ref: str
    pin: str
    net: str | None
    cx: float
    cy: float
    w: float
    h: float
    drill: float
    round: bool

    @property
    def through_hole(self) -> bool:
        return self.drill > 0


def placed_pads(ref: str, fp: Footprint, x: float, y: float, rot: int, nets: dict[str, str]) -> list[PlacedPad]:
    """The pads of part ``ref`` at ``(x, y, rot)``; ``nets`` maps pin name → net name."""
    out = []
    for i, p in enumerate(fp.pads):
        dx, dy = rotate(p.dx, p.dy, rot)
        w, h = rotate_size(p.w, p.h, rot)
        out.append(PlacedPad(ref, p.name, nets.get(p.name), round(x + dx, 4), round(y + dy, 4), w, h, p.drill,
                             p.through_hole and i > 0))
    return out


def courtyard(fp: Footprint, x: float, y: float, rot: int) -> tuple[float, float, float, float]:
    """Courtyard rectangle of a placed part in board coordinates."""
    x0, y0, x1, y1 = fp.extent()
    corners = [rotate(cx, cy, rot) for cx, cy in ((x0, y0), (x1, y1))]
    xs = [c[0] for c in corners]
    ys = [c[1] for c in corners]
    return x + min(xs), y + min(ys), x + max(xs), y + max(ys)
