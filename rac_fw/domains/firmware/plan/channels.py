"""Analog channel references a plan may use: by pin, or by a devicetree io-channels entry.

Shared by the ADC operations and by the plan loader (which locates errors inside a channel).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.fields import PinName


class AdcPinChannel(PlanModel):
    """An analog input named by its pin; the ADC unit and channel come from the pin facts."""

    pin: PinName


class AdcDtChannel(PlanModel):
    """A channel taken from a devicetree ``io-channels`` list (Zephyr ``ADC_DT_SPEC_GET_BY_IDX``).

    ``path=zephyr_user, channel_index=0`` is the first entry of ``/zephyr,user``'s io-channels; ``pin``
    says which analog input that entry samples so the tool can write the overlay and check the pin.
    """

    path: Literal["zephyr_user"] = Field(description="Devicetree node holding io-channels.")
    channel_index: int = Field(ge=0, le=15, description="Index into that node's io-channels list.")
    pin: PinName | None = Field(default=None, description="Analog input pin; None = the board's default.")


def _channel_kind(value: Any) -> str:
    """``dt`` when the channel names a devicetree path/index, else ``pin``."""
    if isinstance(value, dict):
        return "dt" if "path" in value or "channel_index" in value else "pin"
    return "dt" if isinstance(value, AdcDtChannel) else "pin"


AdcChannel = Annotated[
    Annotated[AdcPinChannel, Tag("pin")] | Annotated[AdcDtChannel, Tag("dt")],
    Discriminator(_channel_kind),
    Field(description="Either {pin: PA0} or {path: zephyr_user, channel_index: 0[, pin: …]}."),
]


Resolution = Annotated[int, Field(ge=6, le=16, description="Conversion resolution in bits.")]
