"""The ``adc_periodic`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.ops.adc import (
    ACTIONS,
    ESPIDF_BEHAVIOUR,
    HAL_BEHAVIOUR,
    OUTPUTS,
    ZEPHYR_BEHAVIOUR,
    clock,
    espidf_view,
    hal_view,
    resolution,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.channels import AdcChannel, Resolution
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class AdcPeriodic(Operation):
    """Sample one channel every ``interval_ms`` (``samples`` times, or forever)."""

    op: Literal["adc_periodic"]
    channel: AdcChannel
    interval_ms: int = Field(ge=1, le=3_600_000, description="Sampling period in milliseconds.")
    convert_mv: bool = True
    resolution_bits: Resolution = 12
    samples: int | None = Field(default=None, ge=1, le=1_000_000, description="Sample count; None = forever.")


def _zephyr(b: ZephyrBuilder, index: int, op: AdcPeriodic) -> dict[str, Any]:
    return b.adc_view(index, op, [op.channel], op.interval_ms, op.samples)


def _espidf(b: EspIdfBuild, index: int, op: AdcPeriodic) -> dict[str, Any]:
    return espidf_view(b, index, op, [op.channel], op.interval_ms)


def _hal(b: HalBuild, index: int, op: AdcPeriodic) -> dict[str, Any]:
    return hal_view(b, index, op, [op.channel])


SPEC = OpSpec(
    model=AdcPeriodic,
    family="adc",
    needs="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc", view=_zephyr, available=lambda t: has_dt_label(t, r"adc\d*"),
                              quiet=True, behaviour=ZEPHYR_BEHAVIOUR),
        "espidf": Realization(template="adc", view=_espidf, quiet=True, behaviour=ESPIDF_BEHAVIOUR),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=HAL_BEHAVIOUR),
    },
    outputs=OUTPUTS,
    actions=ACTIONS,
    checks=(resolution, clock),
    codes=("E_ADC_RESOLUTION", "E_ADC_CLOCK"),
)
