"""ADC operations: one conversion, periodic sampling, and a multi-channel scan."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.fields import Name, PinName


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


class AdcRead(Operation):
    """Convert one channel once (at start-up, or every ``interval_ms``), optionally to millivolts."""

    op: Literal["adc_read"]
    channel: AdcChannel
    convert_mv: bool = Field(default=True, description="Convert the raw code to millivolts.")
    resolution_bits: Resolution = 12


class AdcPeriodic(Operation):
    """Sample one channel every ``interval_ms`` (``samples`` times, or forever)."""

    op: Literal["adc_periodic"]
    channel: AdcChannel
    interval_ms: int = Field(ge=1, le=3_600_000, description="Sampling period in milliseconds.")
    convert_mv: bool = True
    resolution_bits: Resolution = 12
    samples: int | None = Field(default=None, ge=1, le=1_000_000, description="Sample count; None = forever.")


class AdcScan(Operation):
    """Convert several channels of one ADC unit in sequence, every ``interval_ms``.

    With ``buffer`` (a dma_rx buffer) the sequence is transferred by DMA; the buffer must hold one
    ``element_bytes`` item per channel.
    """

    op: Literal["adc_scan"]
    channels: list[AdcChannel] = Field(min_length=1, max_length=16)
    interval_ms: int = Field(default=1000, ge=1, le=3_600_000)
    convert_mv: bool = True
    resolution_bits: Resolution = 12
    buffer: Name | None = Field(default=None, description="dma_rx buffer receiving the scan by DMA.")
