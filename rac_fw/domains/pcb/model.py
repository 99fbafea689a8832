"""The PCB action: a bundle of relations over named parts, pins, nets, regions and layers.

Nothing here accepts a coordinate or a metric distance: distances are ordered classes
(:mod:`.classes`), the rest are names the observation lists. Unknown fields are rejected, so an
``x``/``y``/``mm`` smuggled into a relation is a located schema error.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_+\-]*$")]
PinRef = Annotated[str, Field(min_length=3, max_length=80, pattern=r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z0-9_+\-.]+$",
                              description="REF.PIN, e.g. U1.7, J1.A5 or J3.2.1")]
NetName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_+\-][A-Za-z0-9_+\-.]*$",
                               description="a net as the observation names it, e.g. GND, +3V3, USB_D+")]
Cls = Literal["tight", "close", "loose"]
Side = Literal["left", "right", "top", "bottom"]
Axis = Literal["horizontal", "vertical"]


class _Rel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BoardEdge(_Rel):
    """Part ``ref`` sits at board edge ``side`` (a connector also faces outward)."""

    kind: Literal["board_edge"]
    ref: Name
    side: Side
    distance: Cls = "tight"


class PlaceRelative(_Rel):
    """Part ``a`` is ``relation`` to part or pin ``b`` within the class's gap."""

    kind: Literal["place_relative"]
    a: Name
    b: Annotated[str, Field(min_length=1, max_length=80, description="a part REF or a pin REF.PIN")]
    relation: Literal["near", "left_of", "right_of", "above", "below"] = "near"
    distance: Cls = "close"


class Align(_Rel):
    """The parts' centres share one line: ``horizontal`` (same y) or ``vertical`` (same x)."""

    kind: Literal["align"]
    refs: Annotated[list[Name], Field(min_length=2, max_length=16)]
    axis: Axis


class Symmetric(_Rel):
    """Two parts mirror each other about the board's centre line on ``axis`` (``vertical``: the
    line x = width/2; ``horizontal``: y = height/2)."""

    kind: Literal["symmetric"]
    refs: Annotated[list[Name], Field(min_length=2, max_length=2)]
    axis: Axis


class Group(_Rel):
    """The parts stay together: every centre within the class's spread of their centroid."""

    kind: Literal["group"]
    refs: Annotated[list[Name], Field(min_length=2, max_length=16)]
    spread: Cls = "close"


class Keepout(_Rel):
    """Named parts (courtyards) and nets (copper) stay out of a named region."""

    kind: Literal["keepout"]
    region: Name
    refs: Annotated[list[Name], Field(max_length=32)] = []
    nets: Annotated[list[NetName], Field(max_length=32)] = []


class Decouple(_Rel):
    """Capacitor ``cap`` decouples IC pin ``pin``: its pad on the pin's net is within the class's gap."""

    kind: Literal["decouple"]
    cap: Name
    pin: PinRef
    distance: Cls = "tight"


class RouteMatched(_Rel):
    """The nets' routed lengths agree within the class's tolerance."""

    kind: Literal["route_matched"]
    nets: Annotated[list[NetName], Field(min_length=2, max_length=8)]
    tolerance: Cls = "close"


class DiffPair(_Rel):
    """Nets ``p`` and ``n`` run as a coupled pair with matched lengths."""

    kind: Literal["diff_pair"]
    p: NetName
    n: NetName
    tolerance: Cls = "close"


class LayerPreference(_Rel):
    """Net ``net`` runs on copper layer ``layer`` only (no via)."""

    kind: Literal["layer_preference"]
    net: NetName
    layer: Literal["F.Cu", "In1.Cu", "In2.Cu", "In3.Cu", "In4.Cu", "B.Cu"]


class ViaLimit(_Rel):
    """Net ``net`` uses at most ``max`` vias."""

    kind: Literal["via_limit"]
    net: NetName
    max: Annotated[int, Field(ge=0, le=64)]


class RoutePriority(_Rel):
    """Route these nets first, in this order (shorter, straighter copper for the first)."""

    kind: Literal["route_priority"]
    nets: Annotated[list[NetName], Field(min_length=1, max_length=64)]


Relation = Annotated[
    BoardEdge | PlaceRelative | Align | Symmetric | Group | Keepout | Decouple | RouteMatched | DiffPair
    | LayerPreference | ViaLimit | RoutePriority,
    Field(discriminator="kind"),
]

PLACEMENT_KINDS = frozenset({"board_edge", "place_relative", "align", "symmetric", "group", "decouple"})
ROUTING_KINDS = frozenset({"route_matched", "diff_pair", "layer_preference", "via_limit", "route_priority"})
#: the field holding a relation's ordered class (what a relaxation loosens)
CLASS_FIELDS = {"board_edge": "distance", "place_relative": "distance", "decouple": "distance", "group": "spread",
                "route_matched": "tolerance", "diff_pair": "tolerance"}


def relation_key(rel: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A relation without its class: two relations with one key constrain the same thing (a bundle's
    relation that states a requirement, at whatever class)."""
    cls = CLASS_FIELDS.get(rel["kind"])
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in rel.items() if k != cls))


class PcbAction(BaseModel):
    """The complete relation bundle for one board; it is realized jointly."""

    model_config = ConfigDict(extra="forbid")

    relations: Annotated[list[Relation], Field(max_length=128)] = []
