"""The ``adc_read`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.channels import AdcChannel, Resolution
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class AdcRead(Operation):
    """Convert one channel once (at start-up, or every ``interval_ms``), optionally to millivolts."""

    op: Literal["adc_read"]
    channel: AdcChannel
    convert_mv: bool = Field(default=True, description="Convert the raw code to millivolts.")
    resolution_bits: Resolution = 12


def _zephyr(b: ZephyrBuilder, index: int, op: AdcRead) -> dict[str, Any]:
    return b.adc_view(index, op, [op.channel], None, None)


def _espidf(b: EspIdfBuild, index: int, op: AdcRead) -> dict[str, Any]:
    where = f"operations[{index}]"
    view: dict[str, Any] = {
        "channels": [b.adc_channel(c, f"{where}.channel") for c in [op.channel]],
        "bitwidth": b.adc_bitwidth(op.resolution_bits),
        "interval_ms": None,
        "task": b.thread(None, b.symbol(index, op)),
    }
    return view


SPEC = OpSpec(
    model=AdcRead,
    family="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc", view=_zephyr, available=lambda t: has_dt_label(t, r"adc\d*")),
        "espidf": Realization(template="adc", view=_espidf),
        "hal": Realization(template="ops"),
        "baremetal": Realization(template="ops/adc_read"),
    },
)
