"""The core clock a plan may request: which frequencies the chip's PLL reaches, and how Zephyr sets them.

A core clock request is judged against three facts: the chip's ``SYSCLK``/``CPU`` limit (``clocks:`` in
the chip pack), the main PLL's legal ranges (``Target.pll``: M, N, P, Q and the VCO input/output
ranges of the reference manual) fed by the board's crystal (``HSE``), and the bus limits each prescaled
clock must stay under. The Zephyr devicetree names of that tree (the ``pll`` node, the ``rcc`` node's
prescaler properties per clock domain) are binding facts kept in ``clock_trees.yaml`` beside this
module, keyed by chip pack and cited there; a chip without an entry has a clock the plan cannot change.

Everything is exact integer arithmetic on Hz (``Fraction``): a PLL setting either produces the
requested frequency or it is not offered.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from rac_fw.domains.firmware.facts.memo import per_target
from rac_fw.domains.firmware.facts.query import clock_hz
from rac_fw.domains.firmware.facts.storage import flash

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.chip import Pll
    from rac_fw.domains.firmware.facts.model import Target


@dataclass(frozen=True)
class Prescaler:
    """One prescaled clock of the tree as the Zephyr ``rcc`` node sets it."""

    clock: str
    """The clock domain it produces (``HCLK``, ``APB1``), whose ``max_hz`` the chip pack states."""
    parent: str
    """The clock it divides (``SYSCLK``, ``HCLK``)."""
    property: str
    """The ``rcc`` node property holding the divider (``apb1-prescaler``; ``d2ppre1`` on the H7)."""
    kind: str
    """``ahb`` or ``apb``: which of ``Target.bus_prescalers``' divider lists it takes."""


@dataclass(frozen=True)
class ClockTree:
    """The Zephyr devicetree nodes that set a chip's core clock (``st,stm32*-pll-clock`` and ``rcc``)."""

    pll_node: str
    """Node label of the main PLL (``pll``)."""
    pll_compatible: str
    source_node: str
    """Node label of the PLL's input oscillator (``clk_hse``), whose frequency is the ``HSE`` clock fact."""
    source_clock: str
    """The clock fact giving that oscillator's frequency (``HSE``)."""
    q_clock: str | None
    """The clock domain fed by the PLL's Q output when the plan must keep it in range (``PLL48CK``)."""
    prescalers: tuple[Prescaler, ...]
    source: str
    """Where the names come from (binding and SoC dtsi, with commit)."""
    timer_clocks: tuple[TimerClock, ...] = ()
    """The timer kernel clocks fed from an APB bus (``APB1_TIM``), which follow its prescaler."""


@dataclass(frozen=True)
class TimerClock:
    """A timer kernel clock: its APB bus clock when that bus' prescaler is 1, else twice it (RM0090 §6.2,
    RM0433 §8.5.6 with TIMPRE = 0)."""

    clock: str
    bus: str


@dataclass(frozen=True)
class CpuChoice:
    """A CPU clock a framework sets from one member of a Kconfig choice (ESP-IDF ``ESP_DEFAULT_CPU_FREQ_MHZ``)."""

    framework: str
    choices_mhz: tuple[int, ...]
    symbol: str
    """The member's symbol, ``{mhz}`` the frequency (``CONFIG_ESP_DEFAULT_CPU_FREQ_MHZ_{mhz}``)."""

    def member(self, mhz: int) -> str:
        return self.symbol.format(mhz=mhz)


@cache
def _raw() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(Path(__file__).with_name("clock_trees.yaml").read_text(encoding="utf-8"))
    return data


@cache
def _choices() -> dict[str, CpuChoice]:
    return {
        chip: CpuChoice(entry["framework"], tuple(entry["choices_mhz"]), entry["symbol"])
        for chip, entry in (_raw().get("kconfig") or {}).items()
    }


def cpu_choice(target: Target, framework: str) -> CpuChoice | None:
    """The Kconfig choice that sets the chip's CPU clock under ``framework``, if it has one."""
    found = _choices().get(target.chip)
    return found if found is not None and found.framework == framework else None


@cache
def _trees() -> dict[str, ClockTree]:
    raw: dict[str, Any] = _raw().get("pll") or {}
    return {
        chip: ClockTree(
            pll_node=entry["pll_node"],
            pll_compatible=entry["pll_compatible"],
            source_node=entry["source_node"],
            source_clock=entry["source_clock"],
            q_clock=entry.get("q_clock"),
            prescalers=tuple(Prescaler(**p) for p in entry["prescalers"]),
            source=entry["source"],
            timer_clocks=tuple(TimerClock(**t) for t in entry.get("timer_clocks") or ()),
        )
        for chip, entry in raw.items()
    }


def clock_tree(target: Target) -> ClockTree | None:
    """The chip's Zephyr clock tree names, or None when the plan cannot change its clock."""
    return _trees().get(target.chip) if target.pll is not None else None


@dataclass(frozen=True)
class PllSetting:
    """A PLL configuration producing one system clock, and the bus dividers that keep every bus legal."""

    sysclk_hz: int
    source_hz: int
    m: int
    n: int
    p: int
    q: int | None
    """The Q divider (None when the tree keeps no Q output)."""
    q_hz: Fraction | None
    """What the Q output then runs at (``PLL48CK``: exactly 48 MHz for USB, at most 48 MHz for SDIO/RNG)."""
    dividers: dict[str, int]
    """Clock domain → the divider from its parent (``APB1`` → 4)."""
    clocks_hz: dict[str, int]
    """Clock domain → its resulting frequency."""

    @property
    def vco_hz(self) -> Fraction:
        return Fraction(self.source_hz * self.n, self.m)


def core_limit_hz(target: Target) -> int | None:
    """The highest core clock the chip allows (``CPU``, else ``SYSCLK``, else ``HCLK``: its ``max_hz``)."""
    for name in ("CPU", "SYSCLK", "HCLK"):
        domain = target.clock(name)
        if domain is not None:
            return domain.max_hz
    return None


def _dividers(target: Target, tree: ClockTree, sysclk: int) -> tuple[dict[str, int], dict[str, int]] | None:
    """The smallest divider per prescaled clock that keeps it under its ``max_hz`` (fastest legal buses)."""
    if target.bus_prescalers is None:
        return None
    clocks = {"SYSCLK": sysclk}
    dividers: dict[str, int] = {}
    for step in tree.prescalers:
        domain = target.clock(step.clock)
        parent = clocks.get(step.parent)
        if domain is None or parent is None:
            return None
        allowed = target.bus_prescalers.ahb if step.kind == "ahb" else target.bus_prescalers.apb
        divider = next((d for d in allowed if parent % d == 0 and parent // d <= domain.max_hz), None)
        if divider is None:
            return None
        dividers[step.clock] = divider
        clocks[step.clock] = parent // divider
    return dividers, clocks


@dataclass(frozen=True)
class _QOutput:
    divider: int
    hz: Fraction
    exact: bool
    """The output runs exactly at its clock's limit (48 MHz for USB)."""


def _q(pll: Pll, target: Target, tree: ClockTree, vco: Fraction) -> _QOutput | None:
    """The Q divider: exactly the Q clock's ``max_hz`` when possible, else the smallest keeping it under.
    None when no divider keeps it in range."""
    domain = target.clock(tree.q_clock) if tree.q_clock else None
    if domain is None:
        return _QOutput(0, Fraction(0), exact=True)
    choices = range(pll.q[0], pll.q[1] + 1)
    exact = next((q for q in choices if vco / q == domain.max_hz), None)
    if exact is not None:
        return _QOutput(exact, vco / exact, exact=True)
    under = next((q for q in choices if vco / q <= domain.max_hz), None)
    return None if under is None else _QOutput(under, vco / under, exact=False)


@per_target
def pll_setting(target: Target, framework: str, sysclk: int) -> PllSetting | None:
    """A PLL and bus setting giving exactly ``sysclk`` Hz from the board's oscillator, or None.

    Preference: a Q output exactly at its clock's limit (USB's 48 MHz), then the highest VCO input
    (smallest M: less jitter, RM0090 recommends 2 MHz), then the smallest P.
    """
    tree, pll = clock_tree(target), target.pll
    source = clock_hz(target, tree.source_clock, framework) if tree is not None else None
    if tree is None or pll is None or not source:
        return None
    buses = _dividers(target, tree, sysclk)
    if buses is None:
        return None
    found: list[tuple[tuple[bool, int, int], PllSetting]] = []
    for m in range(pll.m[0], pll.m[1] + 1):
        vco_in = Fraction(source, m)
        if not pll.vco_in_hz[0] <= vco_in <= pll.vco_in_hz[1]:
            continue
        for p in pll.p:
            n = Fraction(sysclk * p * m, source)
            if n.denominator != 1 or not pll.n[0] <= n <= pll.n[1]:
                continue
            vco = vco_in * n
            if not pll.vco_hz[0] <= vco <= pll.vco_hz[1]:
                continue
            q = _q(pll, target, tree, vco)
            if q is None:
                continue
            setting = PllSetting(
                sysclk_hz=sysclk,
                source_hz=source,
                m=m,
                n=int(n),
                p=p,
                q=q.divider or None,
                q_hz=q.hz if q.divider else None,
                dividers=buses[0],
                clocks_hz=buses[1],
            )
            found.append(((not q.exact, m, p), setting))
    return min(found, key=lambda item: item[0])[1] if found else None


@per_target
def reachable_mhz(target: Target, framework: str, near: int, limit_hz: int) -> tuple[int, ...]:
    """Whole-MHz core clocks a PLL setting reaches, up to ``limit_hz``, nearest to ``near`` first."""
    top = limit_hz // 1_000_000
    reach = [f for f in range(1, top + 1) if pll_setting(target, framework, f * 1_000_000) is not None]
    return tuple(sorted(reach, key=lambda f: (abs(f - near), -f)))


def requested_clocks(target: Target, framework: str, core_hz: int) -> dict[str, int]:
    """The clock domains a core clock request of ``core_hz`` sets under ``framework`` (empty when none reaches
    it): the CPU-frequency choice's CPU clock, or the PLL setting's system and bus clocks with the timer
    kernel clocks that follow their APB prescalers and the PLL's Q output where it is a whole number of Hz."""
    choice = cpu_choice(target, framework)
    if choice is not None:
        return {"CPU": core_hz} if core_hz % 1_000_000 == 0 and core_hz // 1_000_000 in choice.choices_mhz else {}
    tree, setting = clock_tree(target), pll_setting(target, framework, core_hz)
    if tree is None or setting is None:
        return {}
    clocks = dict(setting.clocks_hz)
    for timer in tree.timer_clocks:
        bus = clocks.get(timer.bus)
        if bus is not None:
            clocks[timer.clock] = bus if setting.dividers.get(timer.bus) == 1 else 2 * bus
    if tree.q_clock and setting.q_hz is not None and setting.q_hz.denominator == 1:
        clocks[tree.q_clock] = int(setting.q_hz)
    return clocks


# --- the HAL's names for the same tree (``hal:`` in clock_trees.yaml) --------------------------------------
@dataclass(frozen=True)
class VciRange:
    """One PLL input-frequency range the RCC must be told (``RCC_PLL1VCIRANGE_2``: 4-8 MHz)."""

    max_hz: int
    name: str


@dataclass(frozen=True)
class HalClockTree:
    """What STM32Cube HAL's ``SystemClock_Config`` needs beyond the PLL numbers: the HSE mode the board wires,
    the PLL input range and VCO range macros (H7 PLL1), and the regulator scale that needs the over-drive."""

    hse_state: str
    """``RCC_HSE_ON`` (a crystal) or ``RCC_HSE_BYPASS`` (an external clock such as the ST-LINK's MCO)."""
    vci_ranges: tuple[VciRange, ...] = ()
    """PLL input ranges, ascending (empty: the RCC has no range field, F4)."""
    vco_range: str | None = None
    """The VCO range macro matching ``Target.pll.vco_hz`` (``RCC_PLL1VCOWIDE``), None: no such field."""
    overdrive_scale: int | None = None
    """The ``PWR_REGULATOR_VOLTAGE_SCALE<n>`` that ``__HAL_PWR_VOLTAGESCALING_CONFIG`` reaches through
    ``SYSCFG->PWRCR`` ODEN (so the SYSCFG clock runs first); None: no such scale."""
    source: str = ""

    def vci(self, hz: Fraction) -> str | None:
        """The input-range macro for a PLL reference of ``hz``."""
        return next((r.name for r in self.vci_ranges if hz <= r.max_hz), None)


@cache
def _hal_trees() -> dict[str, HalClockTree]:
    raw: dict[str, Any] = _raw().get("hal") or {}
    return {
        chip: HalClockTree(
            hse_state=entry["hse_state"],
            vci_ranges=tuple(VciRange(**r) for r in entry.get("vci_ranges") or ()),
            vco_range=entry.get("vco_range"),
            overdrive_scale=entry.get("overdrive_scale"),
            source=entry["source"],
        )
        for chip, entry in raw.items()
    }


def hal_clock_tree(target: Target) -> HalClockTree | None:
    """The chip's HAL clock set-up names, None when the HAL lowering cannot run its PLL."""
    return _hal_trees().get(target.chip) if target.pll is not None else None


@dataclass(frozen=True)
class FlashSetting:
    """The regulator scale and flash wait states one CPU/HCLK pair needs."""

    scale: int
    """``PWR_REGULATOR_VOLTAGE_SCALE<scale>``."""
    latency: int
    """``FLASH_LATENCY_<latency>``: wait states."""


def flash_setting(target: Target, cpu_hz: int, hclk_hz: int) -> FlashSetting | None:
    """The first voltage scale the facts list (``flash.voltage_scales``, in the order a clock set-up prefers them)
    that allows ``cpu_hz`` and whose wait-state table reaches ``hclk_hz``, with the fewest wait states the reference
    manual's table gives for that HCLK; None when no scale does."""
    geometry = flash(target)
    for scale in geometry.voltage_scales if geometry is not None else ():
        if cpu_hz <= scale.cpu_max_hz:
            latency = next((i for i, top in enumerate(scale.wait_states_hclk_max_hz) if hclk_hz <= top), None)
            if latency is not None:
                return FlashSetting(scale.scale, latency)
    return None
