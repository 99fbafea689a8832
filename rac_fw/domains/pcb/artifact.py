"""The realized board as data: where each part sits and what copper connects the nets.

This is the wire format between the realizer (which writes it) and the verifier and exporters (which
read it, and must reject a malformed or forged one with located evidence). Pad geometry is *not* in the
artifact: readers derive it from the task's footprints and the placements, so moving a part moves
its pads.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Mm = Annotated[float, Field(ge=-1000, le=1000, allow_inf_nan=False)]


class _A(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PartPlacement(_A):
    x: Mm
    y: Mm
    rot: Annotated[float, Field(ge=0, lt=360, allow_inf_nan=False,
                                description="degrees counter-clockwise, as KiCad writes a footprint's angle")] = 0


class Track(_A):
    net: str
    layer: str
    x1: Mm
    y1: Mm
    x2: Mm
    y2: Mm
    width: Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)]


class Via(_A):
    net: str
    x: Mm
    y: Mm
    drill: Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)]
    diameter: Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)]


class PourFill(_A):
    """Filled copper of a pour on one layer: one ring (KiCad's filled polygons are single rings, holes
    joined to the outside by zero-width cuts)."""

    net: str
    layer: str
    points: Annotated[list[tuple[Mm, Mm]], Field(min_length=3, max_length=200_000)]


class BoardArtifact(_A):
    placements: dict[str, PartPlacement]
    tracks: Annotated[list[Track], Field(max_length=100_000)] = []
    vias: Annotated[list[Via], Field(max_length=10_000)] = []
    pours: Annotated[list[PourFill], Field(max_length=20_000)] = []
