"""ADC operations: one conversion, periodic sampling, and a multi-channel scan.

The three differ in their channels and period only, so their ESP-IDF and HAL views and their one rule of
their own (the resolution the converter offers) are here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, replace, violation

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.plan.model import Plan


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


def resolution(plan: Plan, target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_ADC_RESOLUTION: the operation's ``resolution_bits`` must be one the chip's ADC converts at."""
    offered = sorted(target.adc.resolution_bits) if target.adc is not None else []
    if not offered or op.resolution_bits in offered:
        return []
    path: Path = ["operations", index, "resolution_bits"]
    ranked = sorted(offered, key=lambda b: (abs(b - op.resolution_bits), -b))
    return [
        violation(
            "E_ADC_RESOLUTION",
            f"the ADC of {target.id} converts at {', '.join(map(str, offered))} bits, not {op.resolution_bits}",
            path,
            [op.name or op.op],
            [measure("requested", op.resolution_bits, "bits"), measure("nearest", ranked[0], "bits")],
            [relax(f"use {b} bits", replace(path, b)) for b in ranked[:2]],
        )
    ]
