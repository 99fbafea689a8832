"""The ``adc_periodic`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.adc import AdcChannel, Resolution
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation


class AdcPeriodic(Operation):
    """Sample one channel every ``interval_ms`` (``samples`` times, or forever)."""

    op: Literal["adc_periodic"]
    channel: AdcChannel
    interval_ms: int = Field(ge=1, le=3_600_000, description="Sampling period in milliseconds.")
    convert_mv: bool = True
    resolution_bits: Resolution = 12
    samples: int | None = Field(default=None, ge=1, le=1_000_000, description="Sample count; None = forever.")


SPEC = OpSpec(
    model=AdcPeriodic,
    family="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc", available=lambda t: has_dt_label(t, r"adc\d*")),
        "espidf": Realization(template="adc"),
        "hal": Realization(template="ops"),
    },
)
