"""The ``adc_sample`` operation: one channel converted with explicit analog settings, checked against the unit.

Everything ``adc_read`` leaves at the driver's defaults is stated here and validated against the ADC facts
of the chip (``facts/chip.py`` ``Adc``): hardware oversampling (averaging 2^n samples), the acquisition
(sample-and-hold) time, the reference, a differential pair, and offset calibration before the read.
On Zephyr they become the channel node's ``zephyr,oversampling``, ``zephyr,acquisition-time``,
``zephyr,reference``, ``zephyr,differential`` / ``zephyr,input-negative`` properties (the ADC controller
binding's channel child, dts/bindings/adc/adc-controller.yaml) and ``adc_sequence.calibrate``.

On the STM32Cube HAL the same settings are judged against the chip's HAL driver facts (``hal:``), since they
are what the HAL's init structures can express: the oversampler (``ADC_InitTypeDef.Oversampling``, Ratio 2^n
with RightBitShift n, up to ``hal.adc_oversampling_max``), the ``ADC_SAMPLETIME_*`` constants
(``hal.adc_sampling_cycles``: the acquisition time maps to the shortest constant that is at least as long; a
time in microseconds is converted at the ADC clock ``facts.query.adc_clock``), and, on the ``aditf5``
generation (``hal.adc_calibration``), ``SingleDiff = ADC_DIFFERENTIAL_ENDED`` against the pin carrying the
channel's ``ADCn_INNx`` input and ``HAL_ADCEx_Calibration_Start(hadc, ADC_CALIB_OFFSET, <mode>)`` before
the conversion (``templates/hal/adc_sample.c.j2``).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import Clocks, adc_clock, has_dt_label
from rac_fw.domains.firmware.ops.adc import ACTIONS, HAL_BEHAVIOUR, OUTPUTS, clock, resolution
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.channels import AdcChannel, Resolution
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import PinName
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.chip import HalDriver
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.hal import HalBuild
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


#: An STM32 analog input in the pin facts: unit, positive/negative (``INP``/``INN``; F4 ``IN``), channel.
_ANALOG_INPUT = re.compile(r"^ADC(\d)_IN([PN]?)(\d+)$")


def _nearest(values: tuple[int, ...], wanted: int) -> list[int]:
    return sorted(values, key=lambda v: (abs(v - wanted), v))[:2]


def _check(plan: Plan, target: Target, framework: str, index: int, op: AdcSample) -> list[Evidence]:
    """E_ADC_SETTING: each stated setting must be one the chip's ADC offers (oversampling up to its
    ratio, an acquisition time from its list, a reference it has, differential inputs, calibration)."""

    adc = target.adc
    if adc is None:
        return []
    if framework == "hal" and target.hal is not None:
        return resolution(plan, target, framework, index, op) + _check_hal(
            plan_clocks(plan, target, framework), target.hal, index, op
        )
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


def _hal_channel(target: Target, pin: str | None) -> tuple[str, int] | None:
    """(unit, channel) of the positive input ``pin`` carries first (the one the HAL lowering converts)."""
    facts = target.pins.get(pin) if pin else None
    for signal in facts.analog if facts else ():
        match = _ANALOG_INPUT.match(signal)
        if match and match.group(2) != "N":
            return f"ADC{match.group(1)}", int(match.group(3))
    return None


def _negative_pins(target: Target, unit: str, channel: int) -> list[str]:
    """The pins carrying ``<unit>_INN<channel>``: the negative input of that channel's differential pair."""
    signal = f"{unit}_INN{channel}"
    return sorted(name for name, pin in target.pins.items() if signal in pin.analog)


def _wanted_cycles(clocks: Clocks, op: AdcSample) -> float | None:
    """The acquisition time the plan states, in ADC clock cycles (microseconds at the HAL's ADC clock as the plan
    runs it)."""
    if op.acquisition_ticks is not None:
        return float(op.acquisition_ticks)
    clock = adc_clock(clocks)
    if op.acquisition_us is None or clock is None:
        return None
    return op.acquisition_us * clock.hz / 1e6


def _check_hal(clocks: Clocks, hal: HalDriver, index: int, op: AdcSample) -> list[Evidence]:
    """E_ADC_SETTING under the STM32Cube HAL: what the chip's HAL driver facts say its ADC init structures take."""
    target = clocks.target
    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    where = _hal_channel(target, getattr(op.channel, "pin", None))
    unit = where[0] if where else (target.adc.units[0] if target.adc and target.adc.units else "ADC")
    found: list[Evidence] = []

    def refuse(field: str, why: str, options: list[Any], magnitudes: list[Any] | None = None) -> None:
        found.append(violation("E_ADC_SETTING", f"{label}: {why}", [*base, field], [label, unit, field],
                               magnitudes or [], options))  # fmt: skip

    most = hal.adc_oversampling_max
    if op.oversampling > most:
        what = f"averages at most 2^{most} samples" if most else "has no hardware oversampler"
        refuse(
            "oversampling",
            f"{unit} under {hal.release} {what} (hal.adc_oversampling_max = {most}), not 2^{op.oversampling}",
            [relax(f"average 2^{most} samples" if most else "convert without oversampling",
                   replace([*base, "oversampling"], most))],  # fmt: skip
            [measure("oversampling", op.oversampling, "log2"), measure("limit", most, "log2")],
        )
    longest = max(hal.adc_sampling_cycles.values(), default=0.0)
    field = "acquisition_ticks" if op.acquisition_ticks is not None else "acquisition_us"
    wanted = _wanted_cycles(clocks, op)
    stated = op.acquisition_ticks if op.acquisition_ticks is not None else op.acquisition_us
    if stated is not None and (wanted is None or wanted > longest):
        clock = adc_clock(clocks)
        options = [relax("keep the default sampling time", remove([*base, field]))]
        if longest and field == "acquisition_ticks":
            options.insert(0, relax(f"acquire for {int(longest)} cycles", replace([*base, field], int(longest))))
        elif longest and clock is not None and (fit := math.floor(longest * 1e6 / clock.hz)) >= 1:
            options.insert(0, relax(f"acquire for {fit} us", replace([*base, field], fit)))
        at = f" ({wanted:.0f} cycles at {clock.hz} Hz)" if clock is not None and field == "acquisition_us" else ""
        why = (f"{unit} samples for at most {longest:g} cycles (ADC_SAMPLETIME_*, hal.adc_sampling_cycles), "
               f"not {stated} {'cycles' if field == 'acquisition_ticks' else 'us'}{at}")  # fmt: skip
        refuse(field, why, options, [measure("acquisition", stated, "cycles" if field == "acquisition_ticks" else "us"),
                                     measure("longest", longest, "cycles")])  # fmt: skip
    if op.reference == "vdd_1_4":
        refuse("reference", f"{unit} converts against VREF+ only; it has no VDD/4 reference",
               [relax("use the internal reference", replace([*base, "reference"], "internal"))])  # fmt: skip
    if op.negative is not None and not hal.adc_calibration:
        refuse("negative", f"{unit} under {hal.release} converts single-ended inputs only (no SingleDiff)",
               [relax("convert single-ended", remove([*base, "negative"]))])  # fmt: skip
    elif op.negative is not None and where is not None:
        pins = _negative_pins(target, *where)
        if op.negative not in pins:
            refuse(
                "negative",
                f"{op.negative} does not carry {where[0]}_INN{where[1]}, the negative input of channel {where[1]} "
                f"(pin facts: {', '.join(pins) or 'no pin'})",
                [*(relax(f"subtract {p}", replace([*base, "negative"], p)) for p in pins[:2]),
                 relax("convert single-ended", remove([*base, "negative"]))],  # fmt: skip
            )
    if op.calibrate and not hal.adc_calibration:
        refuse("calibrate", f"{unit} under {hal.release} has no offset calibration (HAL_ADCEx_Calibration_Start)",
               [relax("read uncalibrated", replace([*base, "calibrate"], False))])  # fmt: skip
    return found


def _hal(b: HalBuild, index: int, op: AdcSample) -> dict[str, Any]:
    where = f"operations[{index}]"
    view = b.base_view(index, op)
    b.adc_view(view, op, [op.channel], where)
    unit = view["channels"][0]["adc"]
    cycles = b.hal.adc_sampling_cycles
    wanted = _wanted_cycles(b.clocks, op)
    fitting = sorted((c, name) for name, c in cycles.items() if wanted is None or c >= wanted)
    if wanted is None or not fitting:
        name = b.hal.adc_sampling_time
        view["sampling"] = {"name": name, "cycles": cycles.get(name), "wanted": None}
    else:
        view["sampling"] = {"name": fitting[0][1], "cycles": fitting[0][0], "wanted": round(wanted, 1)}
    if op.oversampling:
        others = [u for u in unit["users"] if u != view["sym"]]
        if others or unit["scan"] is not None:
            raise b.unsupported(f"{where}.oversampling", f"{unit['instance']} also converts for "
                                f"{', '.join(others or [unit['scan']['sym']])}; oversampling is set per ADC: "
                                "use a pin of another unit")  # fmt: skip
        unit["oversampling"] = {"sym": view["sym"], "ratio": 1 << op.oversampling, "shift": op.oversampling}
    view["negative"] = None
    if op.negative is not None:
        negative = b.pin(op.negative, f"{where}.negative")
        b.ports.add(negative.port)
        unit["pins"].append(negative)
        view["negative"] = negative
    view["half"] = 1 << (op.resolution_bits - 1)
    view["outputs"] = {"mv": f"{view['sym']}_mv"}  # set by the behaviour's `read` (its `behaviour` part)
    return view


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
        "hal": Realization(template="adc_sample", view=_hal, quiet=True, behaviour=HAL_BEHAVIOUR),
    },
    outputs=OUTPUTS,
    actions=ACTIONS,
    checks=(_check, clock),
    codes=("E_ADC_SETTING", "E_ADC_RESOLUTION", "E_ADC_CLOCK"),
)
