"""Power states of a chip, what can wake it from each, and what each keeps powered (RAM retention).

These are the facts the power obligations judge a plan by: a wake source is only useful if it can end
the state the plan enters (an nRF52 RTC cannot wake System OFF: the RTC is off), and a plan that
continues with its RAM after waking must not pick a state whose wake is a reset (STM32 Standby, ESP32
deep sleep, nRF52 System OFF). How each framework enters a state is a fact of that framework's SoC
support (``enter``), so no lowering branches on a chip.

``rtc_wakeup`` describes the STM32 RTC's periodic wake-up timer (clock dividers, counter width, prescaler
ranges, its vector, the oscillator's spread) for the frameworks that program it themselves; ``after_ms``
becomes a wake-up clock and counter here (``wake_up_setting``), or the nearest reachable delays.

The data is the ``power:`` table of each chip pack (``targets/chips/<chip>/chip.yaml``), with the
manual cited per state, validated into ``Target.power`` when the pack loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, with_config

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

_STRICT = ConfigDict(extra="forbid")

WakeKind = Literal["gpio", "rtc", "timer", "uart"]
"""``gpio``: a pin level or edge; ``rtc``: the low-power real-time clock's wake-up timer (runs from the
32 kHz domain); ``timer``: a high-speed timer or the CPU's SysTick (stops with the main clocks);
``uart``: activity on a UART receive line."""

Mechanism = Literal["idle", "pm", "poweroff", "light_sleep", "deep_sleep", "stop", "standby"]
"""How a framework enters a state: ``idle`` — the scheduler's idle loop (WFI/WFE) while the thread waits;
``pm`` — Zephyr's PM policy picks the state during idle (``CONFIG_PM``); for ``baremetal`` and ``hal``, ``idle``
is a WFI loop in Sleep mode (SLEEPDEEP clear; HAL_PWR_EnterSLEEPMode), woken by the 1 kHz SysTick; ``poweroff`` — Zephyr
``sys_poweroff()``; ``light_sleep``/``deep_sleep`` — ESP-IDF ``esp_light_sleep_start``/``esp_deep_sleep_start``;
``stop``/``standby`` — STM32Cube HAL ``HAL_PWR_EnterSTOPMode``/``HAL_PWR_EnterSTANDBYMode``."""


@with_config(_STRICT)
@dataclass(frozen=True)
class WakeSource:
    """Something that can end a power state."""

    kind: WakeKind
    pins: tuple[str, ...] = ()
    """For ``gpio``: the only pins that can wake (STM32 WKUP pins in WKUP order, WKUP1 first; ESP32 RTC
    IOs); empty = any GPIO."""
    note: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class PowerState:
    """One low-power state as the reference manual names it."""

    name: str
    """The chip's own name, lower-case: ``stop``, ``standby``, ``system_off``, ``light_sleep``…"""
    description: str
    wake: tuple[WakeSource, ...]
    ram_retained: bool
    """True when SRAM keeps its contents and execution continues after the wake-up."""
    wake_resets: bool
    """True when a wake-up restarts the chip from its reset vector (the application starts again)."""
    retained: tuple[str, ...] = ()
    """Memories kept even though SRAM is lost (backup SRAM, RTC memory, backup registers)."""
    zephyr_state: str | None = None
    """Zephyr's ``enum pm_state`` name for it (``suspend-to-idle``, ``soft-off``), None when Zephyr has none."""
    enter: dict[str, Mechanism] = field(default_factory=dict)
    """Framework → how that framework's support for this SoC enters the state; absent = it cannot."""
    source: str = ""

    def wakes(self, kind: str) -> WakeSource | None:
        return next((w for w in self.wake if w.kind == kind), None)


@with_config(_STRICT)
@dataclass(frozen=True)
class RtcWakeup:
    """The RTC's periodic wake-up timer (STM32 RTC_WUTR): a down-counter clocked by RTCCLK over a divider
    or by the 1 Hz ``ck_spre`` the two RTC prescalers make; it keeps counting in Stop and Standby.

    ``after_ms`` is reached when a whole number of counter periods makes it (``wake_up_settings``)."""

    clock: str
    """The RTCCLK source the lowering selects (a clock fact: ``LSI``)."""
    irq: str
    """The wake-up interrupt's vector (CMSIS ``<irq>_IRQn``; the SVD facts attribute it to ``RTC``)."""
    counter_bits: int
    """Width of the reload value WUT; the period is WUT + 1 counter ticks."""
    rtcclk_dividers: tuple[int, ...]
    """RTCCLK dividers of the wake-up clock (WUCKSEL = RTCCLK/16, /8, /4, /2)."""
    async_prediv_max: int
    """Largest PREDIV_A + 1 (7-bit asynchronous prescaler) and PREDIV_S + 1 (15-bit synchronous) that
    divide RTCCLK down to the 1 Hz ck_spre."""
    sync_prediv_max: int
    spre_extended: bool = False
    """WUCKSEL = 11x: ck_spre with 2^16 added to WUT (a 17-bit reach)."""
    clock_min_hz: int | None = None
    """The RTCCLK oscillator's spread over temperature and supply (datasheet): how far a wake-up may drift."""
    clock_max_hz: int | None = None
    source: str = ""


@with_config(_STRICT)
@dataclass(frozen=True)
class WakeUpSetting:
    """One way to program the wake-up timer: ``selection`` (WUCKSEL, as ``RTC_WAKEUPCLOCK_<selection>``),
    the WUT value (``counter``) and the delay it gives."""

    selection: str
    counter: int
    tick_s: float
    ticks: int

    @property
    def ms(self) -> float:
        return self.ticks * self.tick_s * 1000


def ck_spre_prescalers(wakeup: RtcWakeup, rtc_hz: int) -> tuple[int, int] | None:
    """(PREDIV_A + 1, PREDIV_S + 1) that divide ``rtc_hz`` to exactly 1 Hz, the largest asynchronous
    divider first (RM0090 26.3 / RM0433 46.3: a high PREDIV_A lowers the consumption); None if none."""
    for a in range(wakeup.async_prediv_max, 0, -1):
        if rtc_hz % a == 0 and 1 <= rtc_hz // a <= wakeup.sync_prediv_max:
            return a, rtc_hz // a
    return None


def _clocks(wakeup: RtcWakeup, rtc_hz: int) -> list[tuple[str, float, int, int]]:
    """(selection, tick in s, fewest ticks, most ticks) of each wake-up clock, finest first."""
    top = 1 << wakeup.counter_bits
    found = [(f"RTCCLK_DIV{d}", d / rtc_hz, 1, top) for d in sorted(wakeup.rtcclk_dividers)]
    if ck_spre_prescalers(wakeup, rtc_hz) is not None:
        found.append(("CK_SPRE_16BITS", 1.0, 1, top))
        if wakeup.spre_extended:
            found.append(("CK_SPRE_17BITS", 1.0, top + 1, 2 * top))
    return found


def _setting(selection: str, tick: float, ticks: int, top: int) -> WakeUpSetting:
    counter = ticks - 1 - (top if selection == "CK_SPRE_17BITS" else 0)
    return WakeUpSetting(selection=selection, counter=counter, tick_s=tick, ticks=ticks)


def wake_up_setting(wakeup: RtcWakeup, rtc_hz: int, after_ms: int) -> WakeUpSetting | None:
    """The finest wake-up clock whose whole ticks make exactly ``after_ms`` (None: unreachable)."""
    top = 1 << wakeup.counter_bits
    for selection, tick, low, high in _clocks(wakeup, rtc_hz):
        ticks = round(after_ms / 1000 / tick)
        if low <= ticks <= high and abs(ticks * tick * 1000 - after_ms) < 1e-6:
            return _setting(selection, tick, ticks, top)
    return None


def wake_up_range_ms(wakeup: RtcWakeup, rtc_hz: int) -> tuple[float, float]:
    """The shortest and longest delay the wake-up timer reaches at ``rtc_hz``, in ms."""
    clocks = _clocks(wakeup, rtc_hz)
    return min(c[1] * c[2] for c in clocks) * 1000, max(c[1] * c[3] for c in clocks) * 1000


def nearest_reachable_ms(wakeup: RtcWakeup, rtc_hz: int, after_ms: int) -> list[int]:
    """The whole-ms delays next to ``after_ms`` (below and above) that the wake-up timer reaches exactly."""
    candidates: set[int] = set()
    for _, tick, low, high in _clocks(wakeup, rtc_hz):
        exact = after_ms / 1000 / tick
        for ticks in (int(exact), int(exact) + 1):
            ticks = min(max(ticks, low), high)
            ms = ticks * tick * 1000
            if abs(ms - round(ms)) < 1e-6 and round(ms) >= 1:
                candidates.add(round(ms))
    below = [c for c in candidates if c < after_ms]
    above = [c for c in candidates if c > after_ms]
    return [*([max(below)] if below else []), *([min(above)] if above else [])]


@with_config(_STRICT)
@dataclass(frozen=True)
class PowerFacts:
    """Every power state of the chip, shallowest first."""

    states: tuple[PowerState, ...]
    source: str
    rtc_wakeup: RtcWakeup | None = None
    """The RTC wake-up timer, where a framework here programs it itself (the STM32 HAL)."""

    def state(self, name: str) -> PowerState | None:
        return next((s for s in self.states if s.name == name), None)

    def for_framework(self, framework: str) -> list[PowerState]:
        """The states ``framework`` can enter on this chip."""
        return [s for s in self.states if framework in s.enter]

    def waking(self, kind: str, framework: str) -> list[PowerState]:
        """The states ``framework`` enters that a wake source of ``kind`` can end."""
        return [s for s in self.for_framework(framework) if s.wakes(kind)]


def power(target: Target) -> PowerFacts | None:
    """The power facts of ``target`` (None when its chip pack has none)."""
    return target.power
