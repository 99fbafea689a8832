"""The base every plan model derives from: closed (``extra=forbid``) pydantic models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from rac_fw.domains.firmware.plan.fields import Name


class PlanModel(BaseModel):
    """A closed plan object: unknown keys are errors, so a typo never silently becomes a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Operation(PlanModel):
    """Fields every operation has. ``op`` (the discriminator) is declared by each subclass."""

    op: str
    """The operation kind (the union's discriminator); each subclass narrows it to one literal."""
    name: Name | None = None
    """Optional operation name, needed when another operation refers to it (handoff source, log value)."""
