"""The board model: outline, layers, design rules and net classes, copper zones, keepout areas, parts,
nets and named regions of one PCB task.

These are the facts every stage reads — the observation shows them, the realizer places and routes
against them, the verifier measures the artifact against them, the exporter writes them for KiCad.
Parts of a routing task are already placed (``fixed``); a real board's connectors and mounting holes
stay where its designer put them in every task derived from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from rac_fw.domains.pcb.footprints import (
    Footprint,
    PlacedPad,
    Point,
    courtyard,
    courtyard_polygon,
    library,
    placed_pads,
    scaled,
)

LAYER_NAMES = {2: ("F.Cu", "B.Cu"), 4: ("F.Cu", "In1.Cu", "In2.Cu", "B.Cu"),
               6: ("F.Cu", "In1.Cu", "In2.Cu", "In3.Cu", "In4.Cu", "B.Cu")}
SIDES = ("left", "right", "top", "bottom")


@dataclass(frozen=True)
class NetClass:
    """KiCad's net class: the track width, clearance and via its nets are routed with."""

    name: str
    clearance: float
    track_width: float
    via_diameter: float
    via_drill: float
    nets: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "clearance_mm": self.clearance, "track_width_mm": self.track_width,
                "via_diameter_mm": self.via_diameter, "via_drill_mm": self.via_drill, "nets": list(self.nets)}


@dataclass(frozen=True)
class Rules:
    """Design rules in millimetres: the board minimums (a typical prototype service's capabilities)
    and the net classes. ``clearance``/``track_width``/``via_*`` are the Default class; a net in
    another class is routed and judged with that class's numbers."""

    clearance: float = 0.15
    track_width: float = 0.2
    via_drill: float = 0.3
    via_diameter: float = 0.6
    edge_clearance: float = 0.3
    min_annular_ring: float = 0.13
    net_classes: tuple[NetClass, ...] = ()

    @cached_property
    def _class_of(self) -> dict[str, NetClass]:
        return {n: c for c in self.net_classes for n in c.nets}

    @property
    def default_class(self) -> NetClass:
        return NetClass("Default", self.clearance, self.track_width, self.via_diameter, self.via_drill)

    def net_class(self, net: str | None) -> NetClass:
        """The class of ``net`` (Default when no class lists it)."""
        return self._class_of.get(net or "", self.default_class)

    def clearance_between(self, a: str | None, b: str | None) -> float:
        """The gap two nets' copper must keep: the larger of their classes' clearances (KiCad's rule)."""
        return max(self.net_class(a).clearance, self.net_class(b).clearance)

    @property
    def max_clearance(self) -> float:
        return max([self.clearance, *(c.clearance for c in self.net_classes)])

    @property
    def min_track_width(self) -> float:
        """The narrowest track any class asks for: the DRC's track-width minimum."""
        return min([self.track_width, *(c.track_width for c in self.net_classes)])

    @property
    def min_via(self) -> tuple[float, float]:
        """(drill, diameter) minimums over the classes: the DRC's via limits."""
        return (min([self.via_drill, *(c.via_drill for c in self.net_classes)]),
                min([self.via_diameter, *(c.via_diameter for c in self.net_classes)]))

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "clearance_mm": self.clearance, "track_width_mm": self.track_width, "via_drill_mm": self.via_drill,
            "via_diameter_mm": self.via_diameter, "edge_clearance_mm": self.edge_clearance,
            "min_annular_ring_mm": self.min_annular_ring}
        if self.net_classes:
            out["net_classes"] = [c.as_dict() for c in self.net_classes]
        return out


@dataclass(frozen=True)
class Region:
    """A named area. ``keepout`` regions are KiCad rule areas: on ``layers`` (all copper when empty)
    they forbid what their ``no_*`` flags say, always; ``zone`` regions are named areas that
    ``keepout`` relations refer to. ``polygon`` is the exact outline (empty: the rectangle)."""

    name: str
    x0: float
    y0: float
    x1: float
    y1: float
    kind: str = "zone"
    description: str = ""
    polygon: tuple[Point, ...] = ()
    layers: tuple[str, ...] = ()
    no_parts: bool = True
    no_tracks: bool = True
    no_vias: bool = True
    no_pours: bool = True

    def outline(self) -> tuple[Point, ...]:
        return self.polygon or ((self.x0, self.y0), (self.x1, self.y0), (self.x1, self.y1), (self.x0, self.y1))


@dataclass(frozen=True)
class Zone:
    """A copper pour: ``net`` fills ``outline`` on ``layers``, keeping ``clearance`` from other nets;
    pads of the net join it through thermal reliefs (``thermal_gap`` wide, spokes ``thermal_width``)
    or solidly, as ``connect`` says. Higher ``priority`` pours are filled first and win overlaps."""

    net: str
    layers: tuple[str, ...]
    outline: tuple[Point, ...]
    priority: int = 0
    clearance: float = 0.2
    min_width: float = 0.2
    connect: str = "thermal"  # thermal | solid | thru_hole_only | none
    thermal_gap: float = 0.5
    thermal_width: float = 0.5
    name: str = ""


@dataclass(frozen=True)
class Placement:
    x: float
    y: float
    rot: float = 0


@dataclass(frozen=True)
class Component:
    """A part: ``footprint`` is its KiCad library id; ``land`` the board's own copy of the land pattern
    (real boards: what the designer placed; None: the library's); ``side`` where it is mounted."""

    ref: str
    footprint: str
    value: str
    pins: dict[str, str]  # pin name → net name (unlisted pins are unconnected)
    fixed: Placement | None = None
    scale: float = 1.0  # land-pattern scale (1: the library footprint; the robustness study shrinks it)
    side: str = "top"
    land: Footprint | None = None

    @property
    def fp(self) -> Footprint:
        base = self.land if self.land is not None else library()[self.footprint]
        return base if self.scale == 1.0 else scaled(base, self.scale)


@dataclass(frozen=True)
class Board:
    width: float
    height: float
    layers: int = 2
    rules: Rules = field(default_factory=Rules)
    regions: tuple[Region, ...] = ()
    outline: tuple[Point, ...] = ()  # the Edge.Cuts polygon (empty: the rectangle width × height)
    cutouts: tuple[tuple[Point, ...], ...] = ()  # holes in the outline (slots, inner cut-outs)
    zones: tuple[Zone, ...] = ()

    @property
    def layer_names(self) -> tuple[str, ...]:
        return LAYER_NAMES[self.layers]

    def outline_points(self) -> tuple[Point, ...]:
        return self.outline or ((0.0, 0.0), (self.width, 0.0), (self.width, self.height), (0.0, self.height))

    @property
    def area(self) -> float:
        """Board area in mm² (shoelace over the outline, less the cut-outs)."""
        def shoelace(pts: tuple[Point, ...]) -> float:
            return abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True))) / 2
        return shoelace(self.outline_points()) - sum(shoelace(c) for c in self.cutouts)


@dataclass(frozen=True)
class PcbTask:
    """One task: the board, its parts and the goal. ``route`` says whether copper must connect every
    net (routing and combined tasks) or only the placement is judged (placement tasks). Real-board
    tasks (``suite == "boards"``) carry their ``source`` (repository, commit, licence) and the human
    layout's numbers (``baseline``: wirelength, vias, area, DRC) to compare a realized board with."""

    name: str
    category: str  # routing | placement | combined | repair
    family: str
    description: str
    board: Board
    components: tuple[Component, ...]
    route: bool
    reference: dict
    start: dict | None = None  # repair tasks: the infeasible bundle an agent starts from
    suite: str = "quick"
    source: dict | None = None
    baseline: dict | None = None

    @property
    def requirements(self) -> list[dict]:
        """What the verifier demands whatever the agent states: the reference relations (the bundle
        an engineer would write). Repair tasks demand only a clean board for the agent's own bundle:
        their point is repairing an over-constrained one."""
        return [] if self.start is not None else list(self.reference["relations"])

    @cached_property
    def parts(self) -> dict[str, Component]:
        return {c.ref: c for c in self.components}

    @cached_property
    def nets(self) -> dict[str, list[tuple[str, str]]]:
        """Net name → its (ref, pin) members, in part order."""
        out: dict[str, list[tuple[str, str]]] = {}
        for c in self.components:
            for pin, net in c.pins.items():
                out.setdefault(net, []).append((c.ref, pin))
        return out

    @cached_property
    def regions(self) -> dict[str, Region]:
        return {r.name: r for r in self.board.regions}

    def pads_at(self, placements: dict[str, Placement]) -> list[PlacedPad]:
        """Every pad of every part at the given placements (fixed parts use their fixed placement)."""
        pads: list[PlacedPad] = []
        for c in self.components:
            p = c.fixed or placements.get(c.ref)
            if p is not None:
                pads += placed_pads(c.ref, c.fp, p.x, p.y, p.rot, c.pins, c.side)
        return pads

    @cached_property
    def smallest_hole(self) -> float | None:
        """The narrowest hole of any land pattern on the board (None: no holes)."""
        return min((min(p.drill, p.drill_h or p.drill) for c in self.components for p in c.fp.pads if p.drill > 0),
                   default=None)

    def pad_layers(self, ref: str, pin: str) -> tuple[str, ...]:
        """The copper layers pin ``ref.pin`` is on, wherever the part sits (all, for a through-hole pin)."""
        c = self.parts[ref]
        names = self.board.layer_names
        return tuple(dict.fromkeys(n for p in placed_pads(ref, c.fp, 0.0, 0.0, 0.0, {}, c.side) if p.pin == pin
                                   for n in p.on(names)))

    def courtyard_of(self, ref: str, p: Placement) -> tuple[float, float, float, float]:
        c = self.parts[ref]
        return courtyard(c.fp, p.x, p.y, p.rot, c.side)

    def courtyard_polygon_of(self, ref: str, p: Placement) -> list[Point]:
        c = self.parts[ref]
        return courtyard_polygon(c.fp, p.x, p.y, p.rot, c.side)
