"""The ``adc_scan`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import adc_dma_routable, has_dt_label
from rac_fw.domains.firmware.ops.adc import AdcChannel, Resolution
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


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


SPEC = OpSpec(
    model=AdcScan,
    family="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc", available=lambda t: has_dt_label(t, r"adc\d*")),
        "espidf": Realization(template="adc"),
        "hal": Realization(template="ops", features={"dma": adc_dma_routable}),
    },
)
