"""Manufacturing rules the realizer keeps and the verifier checks, decided here once.

Three things a fab or an assembler would reject even though the copper clears:
- a **via in an SMD pad**: solder wicks down an open via (only plugged, filled vias may sit in a pad),
  so no via's copper may overlap a surface-mount pad, the net's own included;
- a **via under an exposed pad**: the land pattern's pad ring and the exposed (thermal) pad it
  surrounds are soldered as one area — a via there shorts to the exposed pad or starves its joint —
  so a part with an exposed pad keeps vias out of the convex hull of its surface-mount pads;
- a **narrow same-net slot**: two parallel runs of one net whose copper gap is below the clearance
  (a length-matching meander with legs one grid step apart) traps etchant and couples the legs into
  one lump, so meander legs are laid at :func:`meander_pitch` and the verifier counts such gaps.
"""

from __future__ import annotations

from functools import cache

from shapely import MultiPoint, Point, Polygon

from rac_fw.domains.pcb.board import PcbTask, Placement
from rac_fw.domains.pcb.footprints import Footprint, PlacedPad, pad_polygon, placed_pads

SMD_KINDS = ("smd", "connect")


def is_smd(pad: PlacedPad) -> bool:
    """Surface-mount copper (no hole): a via may not overlap it."""
    return pad.kind in SMD_KINDS


@cache
def exposed_pads(fp: Footprint) -> frozenset[int]:
    """Indices of the footprint's exposed pads: surface-mount pads whose centre lies inside the convex
    hull of the other surface-mount pads' centres and that are larger than every pad of that ring
    (a QFN's thermal pad, a module's ground pad; not a SOT-223 tab, which lies outside its row)."""
    smd = [(i, p) for i, p in enumerate(fp.pads) if p.kind in SMD_KINDS]
    out = set()
    for i, p in smd:
        ring = [q for j, q in smd if j != i and (q.dx, q.dy) != (p.dx, p.dy)]
        if len(ring) < 3:
            continue
        hull = MultiPoint([(q.dx, q.dy) for q in ring]).convex_hull
        area = Polygon(pad_polygon(p)).area
        if hull.contains(Point(p.dx, p.dy)) and all(area > Polygon(pad_polygon(q)).area for q in ring):
            out.add(i)
    return frozenset(out)


def via_free_areas(task: PcbTask, placements: dict[str, Placement]) -> list[tuple[str, Polygon]]:
    """(ref, area) for every placed part with an exposed pad: the convex hull of its surface-mount pads."""
    out: list[tuple[str, Polygon]] = []
    for c in task.components:
        p = c.fixed or placements.get(c.ref)
        if p is None or not exposed_pads(c.fp):
            continue
        pads = placed_pads(c.ref, c.fp, p.x, p.y, p.rot, c.pins, c.side)
        out.append((c.ref, MultiPoint([pt for q in pads if is_smd(q) for pt in q.outline()]).convex_hull))
    return out


def meander_pitch(width: float, clearance: float) -> float:
    """Centre-to-centre spacing of a meander's legs: their copper gap is then width + clearance, at
    least the clearance a fab makes and wide enough that the legs do not couple into one lump."""
    return 2 * width + clearance
