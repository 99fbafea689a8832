"""ADC operations: one conversion, periodic sampling, and a multi-channel scan.

The three differ in their channels and period only, so their ESP-IDF and HAL views are built here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild


def espidf_view(b: EspIdfBuild, index: int, op: Any, channels: list[Any], interval_ms: int | None) -> dict[str, Any]:
    """One-shot conversions of ``channels`` in the operation's task, every ``interval_ms`` (None: once)."""
    where = f"operations[{index}]"
    return {
        "channels": [b.adc_channel(c, f"{where}.channel") for c in channels],
        "bitwidth": b.adc_bitwidth(op.resolution_bits),
        "interval_ms": interval_ms,
        "task": b.thread(None, b.symbol(index, op)),
    }


def hal_view(b: HalBuild, index: int, op: Any, channels: list[Any]) -> dict[str, Any]:
    """The HAL view of a conversion of ``channels`` (the ADC units they belong to, initialized once)."""
    view = b.base_view(index, op)
    b.adc_view(view, op, channels, f"operations[{index}]")
    return view
