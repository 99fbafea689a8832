"""The board model: outline, layers, design rules, parts, nets and named regions of one PCB task.

These are the facts every stage reads — the observation shows them, the realizer places and routes
against them, the verifier measures the artifact against them. Parts of a routing task are already
placed (``fixed``); the agent then only states routing relations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from rac_fw.domains.pcb.footprints import Footprint, PlacedPad, courtyard, library, placed_pads, scaled

LAYER_NAMES = {2: ("F.Cu", "B.Cu"), 4: ("F.Cu", "In1.Cu", "In2.Cu", "B.Cu")}
SIDES = ("left", "right", "top", "bottom")


@dataclass(frozen=True)
class Rules:
    """Design rules in millimetres (a typical 2-layer prototype service's capabilities)."""

    clearance: float = 0.15
    track_width: float = 0.2
    via_drill: float = 0.3
    via_diameter: float = 0.6
    edge_clearance: float = 0.3
    min_annular_ring: float = 0.13

    def as_dict(self) -> dict[str, float]:
        return {"clearance_mm": self.clearance, "track_width_mm": self.track_width, "via_drill_mm": self.via_drill,
                "via_diameter_mm": self.via_diameter, "edge_clearance_mm": self.edge_clearance,
                "min_annular_ring_mm": self.min_annular_ring}


@dataclass(frozen=True)
class Region:
    """A named rectangle. ``keepout`` regions hold no part and no copper, ever; ``zone`` regions are
    named areas that relations refer to (``keepout(region, refs|nets)``)."""

    name: str
    x0: float
    y0: float
    x1: float
    y1: float
    kind: str = "zone"
    description: str = ""


@dataclass(frozen=True)
class Placement:
    x: float
    y: float
    rot: int = 0


@dataclass(frozen=True)
class Component:
    ref: str
    footprint: str
    value: str
    pins: dict[str, str]  # pin name → net name (unlisted pins are unconnected)
    fixed: Placement | None = None
    scale: float = 1.0  # land-pattern scale (1: the library footprint; the robustness study shrinks it)

    @property
    def fp(self) -> Footprint:
        return library()[self.footprint] if self.scale == 1.0 else scaled(self.footprint, self.scale)


@dataclass(frozen=True)
class Board:
    width: float
    height: float
    layers: int = 2
    rules: Rules = field(default_factory=Rules)
    regions: tuple[Region, ...] = ()

    @property
    def layer_names(self) -> tuple[str, ...]:
        return LAYER_NAMES[self.layers]


@dataclass(frozen=True)
class PcbTask:
    """One task: the board, its parts and the goal. ``route`` says whether copper must connect every
    net (routing and combined tasks) or only the placement is judged (placement tasks)."""

    name: str
    category: str  # routing | placement | combined | repair
    family: str
    description: str
    board: Board
    components: tuple[Component, ...]
    route: bool
    reference: dict
    start: dict | None = None  # repair tasks: the infeasible bundle an agent starts from

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
                pads += placed_pads(c.ref, c.fp, p.x, p.y, p.rot, c.pins)
        return pads

    def courtyard_of(self, ref: str, p: Placement) -> tuple[float, float, float, float]:
        return courtyard(self.parts[ref].fp, p.x, p.y, p.rot)
