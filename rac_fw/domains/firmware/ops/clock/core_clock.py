"""The ``core_clock`` operation: request a core clock in MHz, validated against the chip and realized.

Its own obligations:

* ``E_CLOCK_LIMIT`` — the request is above the chip's core clock limit (``CPU``/``SYSCLK`` ``max_hz``);
  the relaxation is the limit itself when a PLL setting reaches it, else the nearest reachable clock.
* ``E_CLOCK_UNREACHABLE`` — no PLL setting (M, N, P within the reference manual's ranges, the VCO in range,
  the Q output kept under its clock's limit) produces exactly the request from the board's crystal;
  relaxations: the nearest whole-MHz clocks that are reachable.
* ``E_CLOCK_CONFLICT`` — a second ``core_clock`` in the plan (relaxation: drop it).
* ``E_CLOCK_FIXED`` — the chip's clock tree cannot be changed by the plan (no PLL facts: nRF52840 runs
  at 64 MHz); relaxations: request the fixed clock, or drop the operation.

ESP-IDF realizes it as the member of its ``ESP_DEFAULT_CPU_FREQ_MHZ`` choice (80/160/240 MHz on the ESP32-S3;
another request is ``E_CLOCK_UNREACHABLE``) and checks ``esp_rom_get_cpu_ticks_per_us()``. Zephyr realizes it
in the devicetree (``&pll`` M/N/P/Q and ``&rcc`` clock-frequency and the bus
prescalers that keep every bus under its limit); the app then checks CMSIS ``SystemCoreClock``, which the
STM32 clock driver sets from the ``rcc`` node, against the request and prints it. STM32Cube HAL realizes it
in ``SystemClock_Config`` (the same PLL setting, the bus prescalers, the regulator scale and flash wait states
of the chip's ``flash.voltage_scales``), then checks ``HAL_RCC_GetSysClockFreq()`` and ``SystemCoreClock`` and
prints ``rac: <op> ok core=<MHz>MHz`` (or ``FAIL``).

What the request sets (``OpSpec.clocks``: SYSCLK, the buses, the timer clocks) is the plan's clock view
(``plan.clocks.plan_clocks``) every other clock-derived rule and lowering asks: a UART baud error, a timer's
prescaler range, a cycle-counter wrap move with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.clock import (
    clock_tree,
    core_limit_hz,
    cpu_choice,
    hal_clock_tree,
    pll_setting,
    reachable_mhz,
    requested_clocks,
)
from rac_fw.domains.firmware.facts.query import clock_hz, core_clock_hz
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import drop_operation, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class CoreClock(Operation):
    """Run the CPU at ``mhz`` and check at start-up that the clock system reports it.

    The tool derives the PLL setting (input divider, multiplier, output dividers) from the board's
    crystal and the chip's PLL ranges, and the smallest bus prescalers that keep each bus under its
    limit; a plan names only the frequency. At most one per plan.
    """

    op: Literal["core_clock"]
    mhz: int = Field(ge=1, le=1000, description="Requested core (CPU) clock in MHz.")


LIMIT = "E_CLOCK_LIMIT"
UNREACHABLE = "E_CLOCK_UNREACHABLE"
FIXED = "E_CLOCK_FIXED"
CONFLICT = "E_CLOCK_CONFLICT"


def _check(plan: Plan, target: Target, framework: str, index: int, op: CoreClock) -> list[Evidence]:
    """The request against the chip's limit, its PLL and the board's crystal."""
    where: list[str | int] = ["operations", index, "mhz"]
    asked = op.mhz * 1_000_000
    label = op.name or "core_clock"
    choice = cpu_choice(target, framework)
    if choice is not None:
        if op.mhz in choice.choices_mhz:
            return []
        options = sorted(choice.choices_mhz, key=lambda f: abs(f - op.mhz))[:2]
        return [
            violation(
                UNREACHABLE,
                f"{framework} runs the {target.id} CPU at {', '.join(map(str, choice.choices_mhz))} MHz "
                f"({choice.member(0).rsplit('_', 1)[0]}_*); {label} asks {op.mhz} MHz",
                where,
                [label, target.id],
                [measure("requested", op.mhz, "MHz")],
                [relax(f"run at {f} MHz", replace(where, f)) for f in options],
            )
        ]
    if clock_tree(target) is None:
        fixed = core_clock_hz(target, framework)
        if fixed is None or fixed == asked:
            return []
        return [
            violation(
                FIXED,
                f"{target.id} runs its core at {fixed / 1e6:g} MHz under {framework} and the plan cannot change "
                f"its clock tree; {label} asks {op.mhz} MHz",
                where,
                [label, target.id],
                [measure("requested", op.mhz, "MHz"), measure("fixed", fixed / 1e6, "MHz")],
                [
                    *([relax(f"request the fixed {fixed // 1_000_000} MHz", replace(where, fixed // 1_000_000))]
                      if fixed % 1_000_000 == 0 else []),
                    relax(f"drop {label}", remove(["operations", index])),
                ],
            )
        ]
    limit = core_limit_hz(target)
    if limit is not None and asked > limit:
        options = list(reachable_mhz(target, framework, limit // 1_000_000, limit)[:2])
        return [
            violation(
                LIMIT,
                f"{label} asks {op.mhz} MHz; {target.id} allows at most {limit / 1e6:g} MHz",
                where,
                [label, target.id],
                [measure("requested", op.mhz, "MHz"), measure("limit", limit / 1e6, "MHz")],
                [relax(f"run at {f} MHz", replace(where, f)) for f in options],
            )
        ]
    source = clock_tree(target)
    if source is None or not clock_hz(target, source.source_clock, framework):
        return []  # the framework's oscillator is not stated: no judgement on what its PLL can reach
    if pll_setting(target, framework, asked) is not None:
        return []
    options = list(reachable_mhz(target, framework, op.mhz, limit or asked)[:3])
    return [
        violation(
            UNREACHABLE,
            f"no PLL setting of {target.id} gives exactly {op.mhz} MHz from the board's "
            f"{source.source_clock} within the PLL's ranges and the bus limits",
            where,
            [label, target.id, source.pll_node],
            [measure("requested", op.mhz, "MHz")],
            [relax(f"run at {f} MHz", replace(where, f)) for f in options],
        )
    ]


def _one(plan: Plan, target: Target, framework: str, index: int, op: CoreClock) -> list[Evidence]:
    """One clock request per plan: two would contradict each other."""
    first = next(i for i, o in enumerate(plan.operations) if isinstance(o, CoreClock))
    if plan.operations[first] is op:  # by identity, not position: the verdict moves with the operation
        return []
    return [
        violation(
            CONFLICT,
            f"operations[{first}] already requests the core clock; a plan requests it once",
            ["operations", index],
            [op.name or "core_clock"],
            relaxations=[drop_operation(plan, index)],
        )
    ]


def _clocks(op: CoreClock, target: Target, framework: str) -> dict[str, int]:
    """What the request sets (``OpSpec.clocks``): the PLL's system, bus and timer clocks, or the CPU-frequency
    choice's CPU clock. ``plan.clocks.plan_clocks`` lays them over the defaults for every other rule."""
    return requested_clocks(target, framework, op.mhz * 1_000_000)


def _zephyr(b: ZephyrBuilder, index: int, op: CoreClock) -> dict[str, Any]:
    """The PLL and rcc nodes of the overlay; a fixed clock needs no node, only the start-up check."""
    hz = op.mhz * 1_000_000
    tree = clock_tree(b.target)
    setting = pll_setting(b.target, "zephyr", hz) if tree is not None else None
    if tree is not None:
        if setting is None:  # the obligation refused this plan
            raise b.unsupported(f"operations[{index}].mhz", f"no PLL setting gives {op.mhz} MHz", [str(op.mhz)], [])
        lines = [f"div-m = <{setting.m}>;", f"mul-n = <{setting.n}>;", f"div-p = <{setting.p}>;"]
        if setting.q is not None:
            lines.append(f"div-q = <{setting.q}>;")
        b.app.okay(tree.pll_node, *lines, f"clocks = <&{tree.source_node}>;")
        b.app.okay(tree.source_node)
        rcc = [f"{p.property} = <{setting.dividers[p.clock]}>;" for p in tree.prescalers]
        b.app.okay("rcc", f"clocks = <&{tree.pll_node}>;", f"clock-frequency = <DT_FREQ_M({op.mhz})>;", *rcc)
    b.app.includes.update({"cmsis_core.h", "soc.h"})
    return {"hz": hz, "setup": True, "step": {"period_ms": None}}


def _espidf(b: EspIdfBuild, index: int, op: CoreClock) -> dict[str, Any]:
    """The member of the CPU-frequency choice, the others switched off (sdkconfig.defaults keeps one)."""
    choice = cpu_choice(b.target, "espidf")
    if choice is None or op.mhz not in choice.choices_mhz:  # the obligation refused this plan
        raise b.unsupported(f"operations[{index}].mhz", f"{op.mhz} MHz is not a CPU frequency choice")
    for mhz in choice.choices_mhz:
        b.sdkconfig[choice.member(mhz)] = "y" if mhz == op.mhz else "n"
    return {"mhz": op.mhz, "symbol": choice.member(op.mhz)}


def _hal(b: HalBuild, index: int, op: CoreClock) -> dict[str, Any]:
    """The check after ``SystemClock_Config``, which programs the request's PLL: ``HAL_RCC_ClockConfig`` sets
    ``SystemCoreClock``; ``HAL_RCC_GetSysClockFreq`` reads SYSCLK back from the RCC registers."""
    hz = op.mhz * 1_000_000
    if b.clocks.hz("SYSCLK") != hz:  # the obligation refused this plan
        raise b.unsupported(f"operations[{index}].mhz", f"no PLL setting gives {op.mhz} MHz")
    view = b.base_view(index, op)
    view.update(hz=hz, mhz=op.mhz, detail=f"rac_{view['sym']}_text")
    return view


def _available(target: Target) -> bool:
    """A Cortex-M core (CMSIS ``SystemCoreClock``) with a stated core clock."""
    return target.core.arch.startswith("cortex-m") and core_limit_hz(target) is not None


def _hal_available(target: Target) -> bool:
    """A PLL whose HAL set-up names the facts give (``hal:`` in ``clock_trees.yaml``) and a crystal it runs from."""
    return _available(target) and hal_clock_tree(target) is not None and bool(clock_hz(target, "HSE", "hal"))


SPEC = OpSpec(
    model=CoreClock,
    family="clock",
    realizations={
        "zephyr": Realization(template="clock", view=_zephyr, available=_available),
        "espidf": Realization(template="clock", view=_espidf, available=lambda t: cpu_choice(t, "espidf") is not None),
        "hal": Realization(template="clock", view=_hal, available=_hal_available),
    },
    checks=(_check, _one),
    clocks=_clocks,
    codes=(LIMIT, UNREACHABLE, FIXED, CONFLICT),
)
