"""The ``adc_read`` operation: its model and its spec."""

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
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
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
    return espidf_view(b, index, op, [op.channel], None)


def _hal(b: HalBuild, index: int, op: AdcRead) -> dict[str, Any]:
    return hal_view(b, index, op, [op.channel])


def _baremetal(b: BaremetalBuild, index: int, op: AdcRead) -> None:
    target = b.target
    pin_name = getattr(op.channel, "pin", None)
    if pin_name is None:
        raise b.error("channel: baremetal needs the analog pin (channel.pin)")
    facts = target.pins.get(pin_name)
    if facts is None or not facts.analog:
        raise b.error(f"{pin_name} is not an analog input in the {target.id} pin facts")
    signal = facts.analog[0]
    digits = b.TRAILING_DIGITS.search(signal.split("_")[-1])
    if digits is None:
        raise b.error(f"cannot read a channel number from {signal}")
    channel = int(digits[1])
    adc = target.adc
    if adc is None:
        raise b.error(f"{target.id}: no ADC facts")
    bits = op.resolution_bits
    ctx = b.base(index, op) | {
        "signal": signal,
        "channel": channel,
        "bits": bits,
        "max_code": (1 << bits) - 1,
        "convert_mv": op.convert_mv,
        "gpio_template": b.gpio_template(),
        "budget": b.budget_us(b.PERIPHERAL_TIMEOUT_US),
    }
    unit = b.adc_unit_of(signal)
    if unit.startswith("ADC") and unit != "ADC":
        regs = b.regs(unit)
        common_name = b.adc_common(unit)
        common = b.regs(common_name)
        smpr = next((r for r in ("SMPR1", "SMPR2") if f"SMP{channel}" in regs.regs.get(r, {})), None)
        if smpr is None:
            raise b.error(f"{unit}: no sampling-time field SMP{channel}")
        ctx.update(
            inst=unit,
            common=common_name,
            m=regs.m,
            p=regs.p,
            mc=common.m,
            pc=common.p,
            gate=b.derive.clock_gate(target, unit),
            pin=b.pin(pin_name, "ANALOG"),
            smpr=smpr,
            smp_shift=regs.field(smpr, f"SMP{channel}")[0],
            full_scale_mv=adc.vref_mv or 3300,
        )
        bus_hz = b.derive.clock_hz(b.clocks, adc.clock or "HCLK")
        limit = adc.max_clock_hz or bus_hz
        divider = next((d for d in adc.clock_prescalers or (1,) if bus_hz // d <= limit), 0)
        if not divider:
            raise b.error(f"{unit}: no ADC clock prescaler keeps {bus_hz} Hz under {limit} Hz")
        ctx.update(bus_hz=bus_hz, adc_hz=bus_hz // divider, divider=divider)
        if regs.has("SR", "CR2", "SQR3"):
            res_codes = {12: 0, 10: 1, 8: 2, 6: 3}
            if bits not in res_codes:
                raise b.error(f"{unit} converts with 12, 10, 8 or 6 bits, not {bits}")
            # ADCPRE (RM0090 §13.13.16): 00 = /2, 01 = /4, 10 = /6, 11 = /8.
            ctx.update(layout="adc_v1", prescaler_code=divider // 2 - 1, res_code=res_codes[bits])
        elif regs.has("ISR", "CFGR", "PCSEL"):
            if bits > 16:
                raise b.error(f"{unit} converts with at most 16 bits, not {bits}")
            # CKMODE (RM0433 §25.7.x ADCx_CCR): 01 = adc_hclk/1, 10 = /2, 11 = /4.
            ctx.update(
                layout="adc_v2", prescaler_code={1: 1, 2: 2, 4: 3}[divider], boost=bus_hz // divider > 20_000_000
            )
        else:
            raise b.error(f"{unit}: no ADC register layout the baremetal templates know")
    else:
        instance = (adc.units or ("SAADC",))[0]
        regs = b.regs(instance)
        res_codes = {8: 0, 10: 1, 12: 2, 14: 3}
        if bits not in res_codes:
            raise b.error(f"{instance} converts with 8, 10, 12 or 14 bits, not {bits}")
        ctx.update(
            layout="saadc",
            inst=instance,
            m=regs.m,
            p=regs.p,
            res_code=res_codes[bits],
            pin={"name": pin_name},
            full_scale_mv=(adc.reference.internal_mv if adc.reference is not None else 600) * 6,
        )
    b.emit("ops/adc_read", ctx)


SPEC = OpSpec(
    model=AdcRead,
    family="adc",
    needs="adc",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="adc", view=_zephyr, available=lambda t: has_dt_label(t, r"adc\d*"),
                              quiet=True, behaviour=ZEPHYR_BEHAVIOUR),
        "espidf": Realization(template="adc", view=_espidf, quiet=True, behaviour=ESPIDF_BEHAVIOUR),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=HAL_BEHAVIOUR),
        "baremetal": Realization(template="ops/adc_read", view=_baremetal),
    },
    outputs=OUTPUTS,
    actions=ACTIONS,
    checks=(resolution, clock),
    codes=("E_ADC_RESOLUTION", "E_ADC_CLOCK"),
)
