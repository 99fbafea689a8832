"""The ``adc_scan`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import adc_dma_routable, has_dt_label
from rac_fw.domains.firmware.ops.adc import clock, espidf_view, hal_view, resolution
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.channels import AdcChannel, Resolution
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


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


def _zephyr(b: ZephyrBuilder, index: int, op: AdcScan) -> dict[str, Any]:
    return b.adc_view(index, op, list(op.channels), op.interval_ms, None)


def _espidf(b: EspIdfBuild, index: int, op: AdcScan) -> dict[str, Any]:
    view = espidf_view(b, index, op, list(op.channels), op.interval_ms)
    if op.buffer is not None:
        view["buffer"] = b.buffer(op.buffer, f"operations[{index}].buffer")
    return view


def _hal(b: HalBuild, index: int, op: AdcScan) -> dict[str, Any]:
    view = hal_view(b, index, op, list(op.channels))
    if op.buffer:
        view["buffer"] = b.buffer(op.buffer, f"operations[{index}].buffer")
        b.adc_dma(view, f"operations[{index}]")
    return view


def _names(plan: Plan, target: Target, framework: str, index: int, op: AdcScan) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: a ``buffer`` must be a declared ``dma_rx`` buffer."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    if op.buffer is not None:
        refs.buffer(op.buffer, [*base, "buffer"], ("dma_rx",))
    return refs.found

def _dma(plan: Plan, target: Target, framework: str, index: int, op: AdcScan) -> list[Evidence]:
    """E_TARGET_UNSUPPORTED: scanning into a DMA ``buffer`` needs a realization with the ``dma`` feature."""
    from rac_fw.domains.firmware.obligations.support import scan_by_dma  # runs after the plan model exists

    return scan_by_dma(target, framework, index, op)

SPEC = OpSpec(
    model=AdcScan,
    family="adc",
    needs="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc", view=_zephyr, available=lambda t: has_dt_label(t, r"adc\d*"),
                              quiet=True),
        "espidf": Realization(template="adc", view=_espidf),
        "hal": Realization(template="ops", view=_hal, features={"dma": adc_dma_routable}),
    },
    checks=(_dma, _names, resolution, clock),
    codes=("E_TARGET_UNSUPPORTED", "E_UNKNOWN_RESOURCE", "E_ADC_RESOLUTION", "E_ADC_CLOCK"),
)
