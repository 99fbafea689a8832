"""Quantities derived from the target facts: clock rates per framework, divider and counter ranges.

Every number an obligation compares against comes from here, computed from the fact pack's data
(``Target.clocks`` and the ``Target.extra`` tables: ``uart``, ``timers``, ``pwm``, ``watchdog``,
``adc``, ``nvic``, ``interrupts``, ``radio``, ``cache_enabled``, ``kernel``). A missing
fact yields ``None`` and the caller does not judge what it cannot compute.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import chip_table as extra


def clock_hz(target: Target, name: str | None, framework: str) -> int | None:
    """Frequency of clock ``name`` after ``framework``'s clock setup (None if not stated)."""
    domain = target.clock(name) if name else None
    return None if domain is None else domain.default_hz.get(framework)


def core_clock_hz(target: Target, framework: str) -> int | None:
    """The CPU/SysTick clock: ``CPU``, else ``HCLK``, else ``SYSCLK``."""
    for name in ("CPU", "HCLK", "SYSCLK"):
        hz = clock_hz(target, name, framework)
        if hz:
            return hz
    return None


# --- UART -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BaudResult:
    """What the UART produces for a requested rate."""

    requested: int
    actual: float
    clock_hz: int | None

    @property
    def error_percent(self) -> float:
        return abs(self.actual - self.requested) / self.requested * 100


def uart_baud(target: Target, instance: str, baud: int, framework: str) -> BaudResult | None:
    """The rate instance ``instance`` really produces for ``baud`` (None when the facts cannot say).

    Two fact shapes: a ``baud_table`` of discrete settings (nRF UARTE: requested → actual, rates not
    in the table cannot be set), or a divider ``actual = f·2^fraction_bits / k`` with integer ``k``
    from ``oversampling[0]·2^fraction_bits`` (the mode the lowerings configure) to ``65535·2^fraction_bits``
    (STM32 USART BRR at 16x oversampling; ESP32 UART integer + 4-bit fractional divider).
    """
    facts = extra(target, "uart")
    table = facts.get("baud_table")
    if isinstance(table, dict):
        listed = {int(k): float(v) for k, v in table.items()}
        if baud in listed:
            return BaudResult(baud, listed[baud], None)
        return BaudResult(baud, 0.0, None)
    entry = facts.get(instance)
    if not isinstance(entry, dict):
        return None
    hz = entry.get("clock_hz") or clock_hz(target, entry.get("clock"), framework)
    if not hz:
        return None
    scale = 1 << int(facts.get("divider_fraction_bits", 0))
    # The first listed oversampling is the one the lowerings configure (STM32: 16x; 8x exists but no
    # lowering selects it), so the smallest divider is that one, not the hardware's absolute minimum.
    oversampling = facts.get("oversampling") or [1]
    k_min = int(oversampling[0]) * scale
    k_max = int(facts.get("divider_max", 0xFFFF)) * scale
    k = min(max(round(hz * scale / baud), k_min), k_max)
    return BaudResult(baud, hz * scale / k, int(hz))


STANDARD_BAUDS = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1_000_000, 2_000_000)


def achievable_bauds(target: Target, instance: str, framework: str, limit_percent: float) -> list[int]:
    """Standard rates this UART reaches within ``limit_percent`` (table entries for table UARTs)."""
    facts = extra(target, "uart")
    table = facts.get("baud_table")
    candidates = sorted(int(k) for k in table) if isinstance(table, dict) else list(STANDARD_BAUDS)
    good = []
    for rate in candidates:
        result = uart_baud(target, instance, rate, framework)
        if result is not None and result.actual and result.error_percent <= limit_percent:
            good.append(rate)
    return good


# --- counters: timers, PWM --------------------------------------------------------------------------
@dataclass(frozen=True)
class Counter:
    """A counter clocked at ``clock_hz`` through a prescaler, counting up to ``top``.

    Prescalers are either ``discrete`` (e.g. nRF powers of two) or any integer 1..``prescaler_max``
    (STM32 16-bit PSC, ESP32 TIMG 16-bit divider).
    """

    name: str
    clock_hz: int
    top: int
    prescaler_max: int = 1
    discrete: tuple[int, ...] = ()

    def fit(self, period_s: float) -> tuple[int, int] | None:
        """The smallest prescaler whose count for ``period_s`` fits: ``(prescaler, ticks)``, or None."""
        at_one = period_s * self.clock_hz
        for prescaler in self.discrete or (max(1, math.ceil(at_one / (self.top + 1))),):
            ticks = round(at_one / prescaler)
            if prescaler <= self._largest and 1 <= ticks <= self.top + 1:
                return prescaler, ticks
        return None

    def steps(self, period_s: float) -> int:
        """Counter ticks per period, i.e. the duty resolution a PWM gets (0 when it cannot fit)."""
        fitted = self.fit(period_s)
        return fitted[1] if fitted else 0

    @property
    def _largest(self) -> int:
        return max(self.discrete) if self.discrete else self.prescaler_max

    @property
    def max_period_s(self) -> float:
        return (self.top + 1) * self._largest / self.clock_hz

    @property
    def min_period_s(self) -> float:
        return 2 / self.clock_hz


def _counter(name: str, entry: dict[str, Any], hz: int, top: int) -> Counter:
    if "prescalers" in entry:
        return Counter(name, hz, top, discrete=tuple(sorted(int(p) for p in entry["prescalers"])))
    return Counter(name, hz, top, prescaler_max=1 << int(entry.get("prescaler_bits", 16)))


def hardware_timer(target: Target, name: str, framework: str) -> Counter | None:
    """The general-purpose timer ``name`` (``extra.timers``) under ``framework``'s clocks."""
    entry = extra(target, "timers").get(name)
    if not isinstance(entry, dict):
        return None
    hz = entry.get("clock_hz") or clock_hz(target, entry.get("clock"), framework)
    if not hz:
        return None
    return _counter(name, entry, int(hz), (1 << int(entry.get("bits", 16))) - 1)


def timer_names(target: Target) -> list[str]:
    """Hardware timers from the facts usable as a plan timer source, widest counter first."""
    timers = extra(target, "timers")
    named = [(n, e) for n, e in timers.items() if isinstance(e, dict) and e.get("kind") not in ("rtc", "system")]
    return [n for n, _ in sorted(named, key=lambda item: -int(item[1].get("bits", 16)))]


def kernel_tick_hz(target: Target, framework: str) -> int | None:
    """The RTOS kernel tick under ``framework`` (``extra.kernel.<framework>.sys_clock_ticks_per_sec``).

    A per-target fact because the SoC decides it: Zephyr runs 32768 ticks/s on the nRF52 RTC, the
    kernel default 10000 on a tickless SysTick, 100 on native_sim. None when the facts do not say.
    """
    entry = extra(target, "kernel").get(framework)
    if not isinstance(entry, dict) or "sys_clock_ticks_per_sec" not in entry:
        return None
    return int(entry["sys_clock_ticks_per_sec"])


def systick(target: Target, framework: str) -> Counter | None:
    """The Cortex-M SysTick: a 24-bit down-counter on the core clock (None on other cores)."""
    hz = core_clock_hz(target, framework)
    if not target.core.arch.startswith("cortex-m") or not hz:
        return None
    return Counter("SysTick", hz, (1 << 24) - 1)


TIMER_CHANNEL = re.compile(r"^(TIM\d+)_CH\d+$")


def pwm_unit(target: Target, pin: str | None, framework: str) -> Counter | None:
    """The PWM counter that can drive ``pin``: its timer channel (STM32) or the PWM block (nRF, ESP)."""
    facts = extra(target, "pwm")
    if "countertop_max" in facts:  # nRF PWM: 15-bit COUNTERTOP, power-of-two prescaler
        hz = clock_hz(target, facts.get("base_clock"), framework)
        if hz:
            return _counter("PWM", facts, int(hz), int(facts["countertop_max"]))
    for name, entry in facts.items():  # ESP32 LEDC: freq · 2^resolution ≤ source clock
        if isinstance(entry, dict) and "max_resolution_bits" in entry:
            hz = entry.get("clock_hz") or clock_hz(target, entry.get("clock"), framework)
            if hz:
                return Counter(name, int(hz), 1 << int(entry["max_resolution_bits"]), prescaler_max=1023)
    found = target.pins.get(pin) if pin else None
    for function in found.functions if found else ():
        match = TIMER_CHANNEL.match(function.signal)
        counter = hardware_timer(target, match.group(1), framework) if match else None
        if counter is not None:
            return counter
    return None


# --- watchdog, flash, IRQ, ADC, radio, cache --------------------------------------------------------
@dataclass(frozen=True)
class WatchdogRange:
    name: str
    min_ms: float
    max_ms: float


def watchdog_range(target: Target, framework: str) -> WatchdogRange | None:
    """The watchdog a plan's ``watchdog`` op uses and its timeout range.

    Entries stating ``framework`` (the ESP-IDF task watchdog) win for that framework; otherwise the
    first hardware watchdog with a stated range (IWDG, WDT, MWDT0).
    """
    entries = [(n, e) for n, e in extra(target, "watchdog").items() if isinstance(e, dict)]
    own = [(n, e) for n, e in entries if e.get("framework") == framework]
    generic = [(n, e) for n, e in entries if "framework" not in e]
    for name, entry in own + generic:
        if "min_timeout_ms" in entry and "max_timeout_ms" in entry:
            return WatchdogRange(name, float(entry["min_timeout_ms"]), float(entry["max_timeout_ms"]))
    return None


@dataclass(frozen=True)
class IrqRange:
    lowest: int
    highest: int
    why: str


def irq_range(target: Target, framework: str) -> IrqRange | None:
    """Priorities an interrupt that may call the RTOS can use (``irq_priority`` numbering)."""
    nvic = extra(target, "nvic")
    if nvic:
        levels = int(nvic.get("levels", 1 << int(nvic.get("priority_bits", 4))))
        rules = nvic.get(framework)
        if isinstance(rules, dict) and "max_irq_priority" in rules:
            return IrqRange(
                0,
                int(rules["max_irq_priority"]),
                f"{framework} reserves the levels above {rules['max_irq_priority']} "
                f"(_IRQ_PRIO_OFFSET {rules.get('irq_prio_offset')})",
            )
        return IrqRange(0, levels - 1, f"{levels} NVIC priority levels")
    interrupts = extra(target, "interrupts")
    if "rtos_safe_max_level" in interrupts:
        top = int(interrupts["rtos_safe_max_level"])
        return IrqRange(1, top, f"levels 1-{top} may call FreeRTOS *FromISR APIs (4+ need assembly)")
    return None


def adc_unit_of(signal: str) -> str:
    """``ADC2_CH3`` / ``ADC1_IN5`` / ``ADC3_INP18`` → the unit; ``AIN0`` → ``SAADC``-style single unit."""
    head = signal.split("_", 1)[0]
    return head if head.startswith("ADC") else "ADC"


def radio_blocked_adc(target: Target) -> str | None:
    """The ADC unit the radio takes while it runs (ESP32-S3 Wi-Fi: ADC2), else None."""
    conflict = extra(target, "radio").get("adc_conflict")
    return conflict if isinstance(conflict, str) else None


def dcache_active(target: Target, framework: str) -> bool:
    """The core has a D-cache and ``framework`` enables it (``extra.cache_enabled``; default yes)."""
    if target.core.dcache is None:
        return False
    enabled = extra(target, "cache_enabled")
    return bool(enabled.get(framework, True))
