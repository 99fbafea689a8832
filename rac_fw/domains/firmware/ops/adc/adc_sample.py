"""The ``adc_sample`` operation: one channel converted with explicit analog settings, checked against the unit.

Everything ``adc_read`` leaves at the driver's defaults is stated here and validated against the ADC facts
of the chip (``facts/chip.py`` ``Adc``): hardware oversampling (averaging 2^n samples), the acquisition
(sample-and-hold) time, the reference, a differential pair, and offset calibration before the read.
On Zephyr they become the channel node's ``zephyr,oversampling``, ``zephyr,acquisition-time``,
``zephyr,reference``, ``zephyr,differential`` / ``zephyr,input-negative`` properties (the ADC controller
binding's channel child, dts/bindings/adc/adc-controller.yaml) and ``adc_sequence.calibrate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import has_dt_label
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.channels import AdcChannel, Resolution
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import PinName
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


class AdcSample(Operation):
    """Convert one channel once with stated oversampling, acquisition time, reference and input mode.

    ``oversampling`` n averages 2^n conversions in hardware (0: none); ``acquisition_us`` (us) or
    ``acquisition_ticks`` (ADC clock cycles) is the sample-and-hold time, one of the values the unit
    offers; ``reference`` is the internal reference or a quarter of VDD; ``negative`` makes the
    conversion differential against that analog pin; ``calibrate`` runs the unit's offset calibration
    before the read. Each is checked against the chip's ADC facts (E_ADC_SETTING).
    """

    op: Literal["adc_sample"]
    channel: AdcChannel
    resolution_bits: Resolution = 12
    oversampling: int = Field(default=0, ge=0, le=10, description="log2 of the samples averaged (0 = none).")
    acquisition_us: int | None = Field(default=None, ge=1, le=1000, description="Acquisition time (us).")
    acquisition_ticks: int | None = Field(default=None, ge=1, le=1000, description="Acquisition time (cycles).")
    reference: Literal["internal", "vdd_1_4"] = Field(default="internal", description="Conversion reference.")
    negative: PinName | None = Field(default=None, description="Negative input pin: a differential conversion.")
    calibrate: bool = Field(default=False, description="Offset calibration before the read.")
    convert_mv: bool = Field(default=True, description="Convert the raw code to millivolts.")


def _nearest(values: tuple[int, ...], wanted: int) -> list[int]:
    return sorted(values, key=lambda v: (abs(v - wanted), v))[:2]


def _check(plan: Plan, target: Target, framework: str, index: int, op: AdcSample) -> list[Evidence]:
    """E_ADC_SETTING: each stated setting must be one the chip's ADC offers (oversampling up to its
    ratio, an acquisition time from its list, a reference it has, differential inputs, calibration)."""

    adc = target.adc
    if adc is None:
        return []
    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    unit = adc.units[0] if adc.units else "ADC"
    found: list[Evidence] = []

    def refuse(field: str, why: str, options: list[Any], magnitudes: list[Any] | None = None) -> None:
        found.append(
            violation(
                "E_ADC_SETTING",
                f"{label}: {why}",
                [*base, field],
                [label, unit, field],
                magnitudes or [],
                options,
            )
        )

    if op.oversampling > adc.oversampling_max:
        options = [
            relax(f"average 2^{adc.oversampling_max} samples", replace([*base, "oversampling"], adc.oversampling_max))
        ]
        refuse(
            "oversampling",
            f"{unit} averages at most 2^{adc.oversampling_max} samples in hardware, not 2^{op.oversampling}",
            options,
            [measure("oversampling", op.oversampling, "log2"), measure("limit", adc.oversampling_max, "log2")],
        )
    for field, offered, unit_name in (
        ("acquisition_us", adc.acquisition_us, "us"),
        ("acquisition_ticks", adc.acquisition_ticks, "cycles"),
    ):
        wanted = getattr(op, field)
        if wanted is None or wanted in offered:
            continue
        if offered:
            options = [
                relax(f"acquire for {v} {unit_name}", replace([*base, field], v)) for v in _nearest(offered, wanted)
            ]
            why = f"{unit} acquires for {', '.join(map(str, offered))} {unit_name}, not {wanted}"
        else:
            other = adc.acquisition_ticks if field == "acquisition_us" else adc.acquisition_us
            options = [relax("keep the driver's default acquisition time", remove([*base, field]))]
            other_unit = "cycles" if field == "acquisition_us" else "us"
            why = (
                f"{unit} sets its acquisition time in {other_unit}, not {unit_name}"
                if other
                else f"the facts list no acquisition times of {unit}"
            )
        refuse(field, why, options, [measure("acquisition", wanted, unit_name)])
    if op.reference == "vdd_1_4" and (adc.reference is None or adc.reference.vdd_fraction != 0.25):
        refuse(
            "reference",
            f"{unit} has no VDD/4 reference",
            [relax("use the internal reference", replace([*base, "reference"], "internal"))],
        )
    if op.negative is not None and not adc.differential:
        refuse(
            "negative",
            f"{unit} converts single-ended inputs only",
            [relax("convert single-ended", remove([*base, "negative"]))],
        )
    elif op.negative is not None and op.negative not in adc.inputs.values():
        inputs = [p for p in adc.inputs.values() if p != getattr(op.channel, "pin", None)][:2]
        refuse(
            "negative",
            f"{op.negative} is not an analog input of {unit} ({', '.join(adc.inputs.values())})",
            [relax(f"subtract {p}", replace([*base, "negative"], p)) for p in inputs],
        )
    if op.calibrate and not adc.calibration:
        refuse(
            "calibrate",
            f"the Zephyr driver of {unit} offers no calibration per read",
            [relax("read uncalibrated", replace([*base, "calibrate"], False))],
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: AdcSample) -> dict[str, Any]:
    settings: dict[str, str] = {}
    if op.oversampling:
        settings["zephyr,oversampling"] = f"<{op.oversampling}>"
    if op.acquisition_us is not None:
        settings["zephyr,acquisition-time"] = f"<ADC_ACQ_TIME(ADC_ACQ_TIME_MICROSECONDS, {op.acquisition_us})>"
    if op.acquisition_ticks is not None:
        settings["zephyr,acquisition-time"] = f"<ADC_ACQ_TIME(ADC_ACQ_TIME_TICKS, {op.acquisition_ticks})>"
    if op.reference == "vdd_1_4":
        # A quarter of VDD seen through gain 1/4: full scale is VDD.
        settings["zephyr,reference"] = '"ADC_REF_VDD_1_4"'
        settings["zephyr,gain"] = '"ADC_GAIN_1_4"'
    if op.negative is not None:
        adc = b.target.adc
        negative = next((name for name, pin in (adc.inputs if adc else {}).items() if pin == op.negative), None)
        if negative is None:  # refused by the obligation above
            raise b.unsupported(f"operations[{index}].negative", f"{op.negative} is no analog input", [op.negative], [])
        settings["zephyr,differential"] = ""
        settings["zephyr,input-negative"] = f"<NRF_SAADC_{negative}>"
    b.app.need("adc")
    b.app.includes.update({"zephyr/drivers/adc.h", "zephyr/sys/atomic.h"})
    slot = b.adc_channel(index, f"operations[{index}].channel", op.channel, op.resolution_bits, settings)
    return {
        "slot": slot,
        "calibrate": op.calibrate,
        "convert_mv": op.convert_mv,
        "differential": op.negative is not None,
        "oversampling": op.oversampling,
        "setup": True,
        "step": {"period_ms": None},
    }


SPEC = OpSpec(
    model=AdcSample,
    family="adc",
    needs="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc_sample", view=_zephyr, available=lambda t: has_dt_label(t, r"adc\d*")),
    },
    checks=(_check,),
    codes=("E_ADC_SETTING",),
)
