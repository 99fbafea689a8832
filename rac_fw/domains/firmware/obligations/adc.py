"""E_ADC_RESOLUTION: an ADC operation asks for a resolution the converter does not offer."""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.ops.adc.adc_periodic import AdcPeriodic
from rac_fw.domains.firmware.ops.adc.adc_read import AdcRead
from rac_fw.domains.firmware.ops.adc.adc_scan import AdcScan
from rac_fw.domains.firmware.plan.model import Plan


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Each ADC op's ``resolution_bits`` against the ADC's supported resolutions."""
    offered = sorted(target.adc.resolution_bits) if target.adc is not None else []
    if not offered:
        return []
    found: list[Evidence] = []
    for i, op in enumerate(plan.operations):
        if isinstance(op, AdcRead | AdcPeriodic | AdcScan) and op.resolution_bits not in offered:
            path: Path = ["operations", i, "resolution_bits"]
            ranked = sorted(offered, key=lambda b: (abs(b - op.resolution_bits), -b))
            found.append(
                violation(
                    "E_ADC_RESOLUTION",
                    f"the ADC of {target.id} converts at {', '.join(map(str, offered))} bits, not {op.resolution_bits}",
                    path,
                    [op.name or op.op],
                    [measure("requested", op.resolution_bits, "bits"), measure("nearest", ranked[0], "bits")],
                    [relax(f"use {b} bits", replace(path, b)) for b in ranked[:2]],
                )
            )
    return found
