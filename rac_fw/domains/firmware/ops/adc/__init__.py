"""ADC operations: one conversion, periodic sampling, and a multi-channel scan.

The three differ in their channels and period only, so their ESP-IDF and HAL views and their one rule of
their own (the resolution the converter offers, and the HAL's ADC clock within its limit) are here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.facts.query import Clocks, adc_clock
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.spec import Action, Output

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.plan.model import Plan


#: What a behaviour reads of a single-channel conversion (``adc.mv``) and asks of it (``act: adc.read``).
OUTPUTS = {"mv": Output("i32", "The channel's last reading taken by `read`, in millivolts.", unit="mV",
                        ready="action")}
ACTIONS = {"read": Action("Convert the channel now (waits for the conversion) and refresh `mv`.", updates=("mv",),
                          blocking=True, fails=True)}
#: The Zephyr realization's behaviour features (templates/zephyr/adc.c.j2: the `_sample` helper, act_read).
ZEPHYR_BEHAVIOUR = frozenset({"output:mv", "action:read"})
#: The ESP-IDF realization's (templates/espidf/adc.c.j2: the `_sample` helper, act_read).
ESPIDF_BEHAVIOUR = frozenset({"output:mv", "action:read"})
#: The STM32 HAL realizations' (templates/hal/ops.c.j2 and adc_sample.c.j2: the `_read` helper, `_act_read`).
HAL_BEHAVIOUR = frozenset({"output:mv", "action:read"})


def espidf_view(b: EspIdfBuild, index: int, op: Any, channels: list[Any], interval_ms: int | None) -> dict[str, Any]:
    """One-shot conversions of ``channels`` in the operation's task, every ``interval_ms`` (None: once)."""
    where = f"operations[{index}]"
    return {
        "channels": [b.adc_channel(c, f"{where}.channel") for c in channels],
        "bitwidth": b.adc_bitwidth(op.resolution_bits),
        "interval_ms": interval_ms,
        "task": b.thread(None, b.symbol(index, op)),
        "outputs": {"mv": f"{b.symbol(index, op)}_mv"},
    }


def hal_view(b: HalBuild, index: int, op: Any, channels: list[Any]) -> dict[str, Any]:
    """The HAL view of a conversion of ``channels`` (the ADC units they belong to, initialized once)."""
    view = b.base_view(index, op)
    b.adc_view(view, op, channels, f"operations[{index}]")
    view["outputs"] = {"mv": f"{view['sym']}_mv"}  # set by the behaviour's `read` (its `behaviour` part)
    return view


def clock(plan: Plan, target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_ADC_CLOCK: under STM32 HAL the ADC runs on its synchronous clock (``facts.query.adc_clock``: the bus
    clock over one of ``Adc.clock_prescalers``), which must stay within ``Adc.max_clock_hz`` on the clock tree
    the plan runs. A ``core_clock`` request can push every prescaler over it: 480 MHz on the STM32H743 gives
    HCLK 240 MHz, and /4, the largest, leaves 60 MHz against the 50 MHz limit (RM0433 ADC_CCR.CKMODE).
    The first ADC operation answers for the clock they share; the relaxation is the fastest core clock
    below the request whose bus clock fits, as the ``core_clock`` spec sets it."""
    from rac_fw.domains.firmware.plan.clocks import plan_clocks
    from rac_fw.domains.firmware.plan.registry import spec

    if framework != "hal" or target.adc is None:
        return []
    if index != next(i for i, o in enumerate(plan.operations) if spec(o.op).family == "adc"):
        return []
    found = adc_clock(plan_clocks(plan, target, framework))
    if found is None or found.fits:
        return []
    options = []
    for i, setter in ((i, o) for i, o in enumerate(plan.operations) if spec(o.op).clocks is not None):
        setting = spec(setter.op).clocks
        assert setting is not None
        mhz = getattr(setter, "mhz", None)  # the core_clock request: its fastest lower clock that fits
        for f in range(mhz - 1, 0, -1) if isinstance(mhz, int) else ():
            candidate = setting(setter.model_copy(update={"mhz": f}), target, framework)
            fit = adc_clock(Clocks(target, framework, candidate)) if candidate else None
            if fit is not None and fit.fits:
                options.append(relax(f"run the core at {f} MHz", replace(["operations", i, "mhz"], f)))
                break
        options.append(relax(f"drop the {setter.op} request", remove(["operations", i])))
    return [
        violation(
            "E_ADC_CLOCK",
            f"{op.name or op.op}: the ADC clock is {found.bus} {found.bus_hz} Hz / {found.prescaler} = {found.hz} Hz "
            f"at the plan's clock tree, over the ADC's {found.limit_hz} Hz limit, and no prescaler of {target.id} "
            "divides further",
            ["operations", index],
            [op.name or op.op, found.bus, target.id],
            [measure("adc_clock", found.hz, "Hz"), measure("limit", found.limit_hz, "Hz")],
            options,
        )
    ]


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
