"""Shapely geometry of a realized board, rebuilt from the task's footprints and the artifact alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from shapely import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry

from rac_fw.contract import Evidence
from rac_fw.domains.pcb.artifact import BoardArtifact
from rac_fw.domains.pcb.board import PcbTask
from rac_fw.domains.pcb.footprints import PlacedPad, courtyard_polygon, placed_pads


@dataclass
class Copper:
    """One piece of copper on one layer: what it is (``label``), its net (None: unconnected pad)."""

    label: str
    net: str | None
    layer: str
    geom: BaseGeometry
    kind: str  # pad | track | via | pour | hole (a bare hole: no copper, but copper keeps the clearance from it)
    fixed: bool = False  # a pad of a part the task placed: its gaps to other given copper are not judged
    owner: str = ""  # the part a pad or hole belongs to (its land pattern's own gaps are the library's)


@dataclass
class BoardGeometry:
    outline: Polygon
    courtyards: dict[str, Polygon]
    pads: dict[tuple[str, str], PlacedPad]
    pad_geoms: dict[tuple[str, str], BaseGeometry]
    copper: list[Copper] = field(default_factory=list)
    centres: dict[str, tuple[float, float]] = field(default_factory=dict)
    rotations: dict[str, float] = field(default_factory=dict)
    track_lines: dict[str, list[tuple[str, LineString]]] = field(default_factory=dict)  # net → (layer, centreline)
    via_count: dict[str, int] = field(default_factory=dict)
    widths: list[tuple[str, float]] = field(default_factory=list)
    via_dims: list[tuple[str, float, float]] = field(default_factory=list)

    @staticmethod
    def build(task: PcbTask, art: BoardArtifact) -> tuple[BoardGeometry, list[Evidence]]:
        problems: list[Evidence] = []
        b = task.board
        outline = Polygon(b.outline_points(), holes=[list(c) for c in b.cutouts])
        geo = BoardGeometry(outline, {}, {}, {})
        for ref in sorted(set(art.placements) - set(task.parts)):
            problems.append(Evidence(code="E_ARTIFACT", message=f"the artifact places {ref!r}, which is not a part "
                                     "of this board", location=f"artifact.placements.{ref}", objects=[ref]))
        for comp in task.components:
            p = art.placements.get(comp.ref)
            if p is None:
                problems.append(Evidence(code="E_ARTIFACT", message=f"part {comp.ref} is not placed",
                                         location="artifact.placements", objects=[comp.ref]))
                continue
            geo.centres[comp.ref] = (p.x, p.y)
            geo.rotations[comp.ref] = p.rot
            geo.courtyards[comp.ref] = Polygon(courtyard_polygon(comp.fp, p.x, p.y, p.rot, comp.side)).buffer(0)
            fixed = comp.fixed is not None
            for k, pad in enumerate(placed_pads(comp.ref, comp.fp, p.x, p.y, p.rot, comp.pins, comp.side)):
                g = (Point(pad.cx, pad.cy).buffer(pad.w / 2, quad_segs=16) if pad.round else
                     Polygon(pad.outline()).buffer(0))
                if pad.hole_only:
                    for layer in b.layer_names:
                        geo.copper.append(Copper(f"hole {pad.ref}#{k}", None, layer, g, "hole", fixed, pad.ref))
                    continue
                if (pad.ref, pad.pin) not in geo.pads:
                    geo.pads[(pad.ref, pad.pin)] = pad
                    geo.pad_geoms[(pad.ref, pad.pin)] = g
                else:  # several pads share the pin's name (a shield's tabs): the pin is all of them
                    geo.pad_geoms[(pad.ref, pad.pin)] = geo.pad_geoms[(pad.ref, pad.pin)].union(g)
                label = f"pad {pad.ref}.{pad.pin}" if pad.pin else f"pad {pad.ref}#{k}"
                for layer in pad.on(b.layer_names):
                    geo.copper.append(Copper(label, pad.net, layer, g, "pad", fixed, pad.ref))
        nets = set(task.nets)
        for i, t in enumerate(art.tracks):
            where = f"artifact.tracks[{i}]"
            if t.net not in nets or t.layer not in b.layer_names:
                problems.append(Evidence(code="E_ARTIFACT", message=f"track {i} names net {t.net!r} / layer "
                                         f"{t.layer!r}, not both of this board", location=where, objects=[t.net]))
                continue
            line = LineString([(t.x1, t.y1), (t.x2, t.y2)])
            geo.copper.append(Copper(f"track {i} ({t.net})", t.net, t.layer, line.buffer(t.width / 2, quad_segs=8),
                                     "track"))
            geo.track_lines.setdefault(t.net, []).append((t.layer, line))
            geo.widths.append((f"track {i} ({t.net})", t.width))
        for i, v in enumerate(art.vias):
            if v.net not in nets:
                problems.append(Evidence(code="E_ARTIFACT", message=f"via {i} names unknown net {v.net!r}",
                                         location=f"artifact.vias[{i}]", objects=[v.net]))
                continue
            g = Point(v.x, v.y).buffer(v.diameter / 2, quad_segs=16)
            for layer in b.layer_names:
                geo.copper.append(Copper(f"via {i} ({v.net})", v.net, layer, g, "via"))
            geo.via_count[v.net] = geo.via_count.get(v.net, 0) + 1
            geo.via_dims.append((f"via {i} ({v.net})", v.drill, v.diameter))
        for i, f in enumerate(art.pours):
            if f.net not in nets or f.layer not in b.layer_names:
                problems.append(Evidence(code="E_ARTIFACT", message=f"pour {i} names net {f.net!r} / layer "
                                         f"{f.layer!r}, not both of this board", location=f"artifact.pours[{i}]",
                                         objects=[f.net]))
                continue
            geo.copper.append(Copper(f"pour {i} ({f.net})", f.net, f.layer, Polygon(f.points).buffer(0), "pour"))
        return geo, problems

    def net_copper(self, net: str) -> list[Copper]:
        return [c for c in self.copper if c.net == net]

    def routed_length(self, net: str) -> float:
        return sum(line.length for _, line in self.track_lines.get(net, []))
