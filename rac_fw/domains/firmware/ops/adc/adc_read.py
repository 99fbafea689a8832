"""The ``adc_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.adc import AdcChannel, Resolution
from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation


class AdcRead(Operation):
    """Convert one channel once (at start-up, or every ``interval_ms``), optionally to millivolts."""

    op: Literal["adc_read"]
    channel: AdcChannel
    convert_mv: bool = Field(default=True, description="Convert the raw code to millivolts.")
    resolution_bits: Resolution = 12


SPEC = OpSpec(
    model=AdcRead,
    family="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc", available=lambda t: has_dt_label(t, r"adc\d*")),
        "espidf": Realization(template="adc"),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/adc_read"),
    },
)
