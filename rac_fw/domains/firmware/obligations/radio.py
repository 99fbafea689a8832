"""E_RADIO_CONFLICT: an ADC unit the radio takes while it runs (ESP32-S3: Wi-Fi holds ADC2).

The radio runs while the plan has an operation flagged ``wifi_radio`` (``wifi: true`` is its shorthand).
ADC pins are judged here; an operation naming an ADC unit itself (a DMA request) asks :func:`sampled_unit`.

Relaxations: the free analog pins of the other ADC unit(s), or running without the radio.
"""

from __future__ import annotations

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import claims
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import adc_unit_of, adc_units, free_pins
from rac_fw.domains.firmware.facts.radio import blocked_adc
from rac_fw.domains.firmware.plan.evidence import Path, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag


def wifi_station_index(plan: Plan) -> int | None:
    """Index of the plan's Wi-Fi station (the radio runs while it exists), else None."""
    return next((i for i, op in enumerate(plan.operations) if spec(op.op).has(Flag.WIFI_RADIO)), None)


def without_wifi(plan: Plan) -> Relaxation:
    """Running without the Wi-Fi radio: the operations without the station, and the ``wifi`` shorthand off.

    Written as whole-list replacement so it applies both to the document the agent sent (``wifi: true``,
    no station) and to the normalized plan (the station appended, the flag false).
    """
    others = [
        op.model_dump(mode="json", exclude_unset=True)
        for op in plan.operations
        if not spec(op.op).has(Flag.WIFI_RADIO)
    ]
    return relax("run without Wi-Fi", replace(["wifi"], False), replace(["operations"], others))


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """ADC channels and ADC DMA requests on the unit the radio blocks, when the plan runs the radio."""
    blocked = blocked_adc(target)
    station = wifi_station_index(plan)
    if station is None or blocked is None:
        return []
    found: list[Evidence] = []
    taken = {c.pin for c in claims(plan, target)}
    others = [p for p in free_pins(target, taken, "ANALOG") if all(adc_unit_of(a) != blocked for a in p.analog)]
    no_wifi = without_wifi(plan)
    for claim in claims(plan, target):
        pin = target.pins.get(claim.pin)
        if claim.signal != "ANALOG" or pin is None or not any(adc_unit_of(a) == blocked for a in pin.analog):
            continue
        options: list[Relaxation] = [
            relax(f"use {p.name} ({', '.join(p.analog)}) on another ADC unit", replace(claim.path, p.name))
            for p in others[:4]
        ]
        found.append(
            violation(
                "E_RADIO_CONFLICT",
                f"{claim.pin} is {', '.join(pin.analog)}: {blocked} cannot convert while Wi-Fi runs",
                claim.path,
                [claim.pin, blocked, "wifi"],
                relaxations=[*options, no_wifi],
            )
        )
    return found


def sampled_unit(plan: Plan, target: Target, path: Path, unit: str) -> list[Evidence]:
    """E_RADIO_CONFLICT for an operation (a DMA request, at ``path``) that samples ADC ``unit`` while the
    plan runs the radio that holds it; asked by the operations that name a unit."""
    blocked = blocked_adc(target)
    if blocked is None or unit != blocked or wifi_station_index(plan) is None:
        return []
    options = [relax(f"sample with {u}", replace(path, u)) for u in adc_units(target) if u != blocked]
    return [
        violation(
            "E_RADIO_CONFLICT",
            f"{blocked} cannot convert while Wi-Fi runs",
            path,
            [blocked, "wifi"],
            relaxations=[*options, without_wifi(plan)],
        )
    ]
