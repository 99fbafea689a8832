"""Register values derived from facts: clock gates, baud divisors, timer and watchdog settings.

Each function is pure arithmetic (or a look-up) over target facts, so it is tested directly and the
templates only print its results. Nothing here reads the plan's intent beyond the numbers it states
(baud, period, timeout); nothing returns a value the facts do not justify.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rac_fw.domains.firmware.facts.chip import Watchdog
from rac_fw.domains.firmware.facts.load import peripheral
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import Clocks, uart_clock

#: Instructions one bounded-poll iteration takes at least (load, test, branch, decrement): turns a
#: timeout in microseconds into an iteration budget that can only over-wait, never under-wait.
POLL_LOOP_CYCLES = 4

_BUS = re.compile(r"^(AHB\d|APB\d)[LH]?ENR$")
_PIN_STM32 = re.compile(r"^P(?P<port>[A-K])(?P<pin>\d+)$")
_PIN_NRF = re.compile(r"^P(?P<port>[01])\.(?P<pin>\d+)$")


class DerivationError(ValueError):
    """A value the facts cannot produce (no clock gate, baud out of range…); the message says which."""


@dataclass(frozen=True)
class ClockGate:
    """The RCC enable bit of a peripheral: ``RCC-><register> |= RCC_<register>_<field>_Msk``."""

    register: str
    field: str
    bus: str
    """The bus the enable register belongs to (``APB2``…), i.e. the peripheral's bus clock."""


def clock_gate(target: Target, instance: str) -> ClockGate | None:
    """The enable bit for ``instance`` from the SVD's RCC ``*ENR`` fields (None: no RCC, e.g. nRF).

    Looks for a field ``<instance>EN`` (then the unit-group forms ``ADC12EN`` for ADC1/ADC2) in the
    run-mode enable registers, preferring the shared ones over the per-core ``C1_`` copies.
    """
    if "RCC" not in target.peripherals:
        return None
    registers = [(r, bus) for r in peripheral(target.id, "RCC").registers if (bus := _BUS.match(r.name))]
    wanted = [f"{instance}EN"]
    unit = re.match(r"^([A-Z]+)(\d)$", instance)
    if unit:
        wanted += [f"{unit[1]}12EN" if unit[2] in "12" else f"{unit[1]}{unit[2]}EN"]
    for name in wanted:
        for reg, bus in registers:
            if any(f.name == name for f in reg.fields):
                return ClockGate(reg.name, name, bus[1])
    raise DerivationError(f"{target.id}: no RCC enable bit {' or '.join(wanted)} in the SVD facts")


def clock_hz(clocks: Clocks, name: str) -> int:
    """Frequency of clock ``name`` as the plan runs it (``BoundBuild.clocks``: the facts' ``default_hz``
    under this framework, which realizes no clock request)."""
    hz = clocks.hz(name)
    if not hz:
        raise DerivationError(f"{clocks.target.id}: no {clocks.framework} frequency for clock {name!r} in the facts")
    return hz


def uart_kernel_clock(target: Target, instance: str) -> str:
    """The clock domain feeding UART ``instance`` (``Target.uart.instances``: USART2 → APB1)."""
    clock = uart_clock(target, instance)
    if clock is None:
        raise DerivationError(f"{target.id}: facts give no clock for {instance} (uart.instances)")
    return clock


def uart_kernel_hz(clocks: Clocks, instance: str) -> int:
    """The kernel clock frequency of UART ``instance`` as the plan runs it."""
    return clock_hz(clocks, uart_kernel_clock(clocks.target, instance))


@dataclass(frozen=True)
class Baud:
    """A UART divisor and the rate it really produces."""

    register: int
    actual: float
    requested: int

    @property
    def error_pct(self) -> float:
        return abs(self.actual - self.requested) / self.requested * 100


def usart_brr(kernel_hz: int, baud: int) -> Baud:
    """STM32 USART BRR for oversampling by 16.

    F4 (RM0090 §30.6.3): USARTDIV = f/(16·baud), BRR = mantissa<<4 | round(16·fraction) with the carry
    folded into the mantissa — which is exactly round(f/baud). H7 (RM0433 §48.5.7): BRR = f/baud for
    OVER8 = 0. One formula, BRR ≥ 16 and < 2^16.
    """
    brr = round(kernel_hz / baud)
    if not 16 <= brr < 1 << 16:
        raise DerivationError(f"baud {baud} is out of range for a {kernel_hz} Hz USART kernel clock")
    return Baud(brr, kernel_hz / brr, baud)


def uarte_baudrate(target: Target, baud: int) -> Baud:
    """nRF UARTE BAUDRATE register value for ``baud``: a look-up, not a formula (Nordic rounds per rate).

    Register values come from ``uart.baudrate_register`` (the SVD's enumerated values), the rate
    each really produces from ``uart.baud_table``.
    """
    registers = target.uart.baudrate_register if target.uart is not None else {}
    if baud not in registers:
        raise DerivationError(f"{target.id}: UARTE supports only {sorted(registers)} baud, not {baud}")
    actual = target.uart.baud_table if target.uart is not None else {}
    return Baud(registers[baud], float(actual.get(baud, baud)), baud)


@dataclass(frozen=True)
class TimerSetting:
    """Prescaler and reload for a period: counter ticks = (prescaler+1)·(reload+1) at ``clock_hz``."""

    prescaler: int
    reload: int
    clock_hz: int

    @property
    def period_s(self) -> float:
        return (self.prescaler + 1) * (self.reload + 1) / self.clock_hz


def stm32_timer(clock_hz: int, period_s: float, counter_bits: int) -> TimerSetting:
    """Smallest 16-bit PSC whose ARR fits the counter: the finest resolution for the period."""
    ticks = round(clock_hz * period_s)
    top = (1 << counter_bits) - 1
    for psc in range(1 << 16):
        arr = round(ticks / (psc + 1)) - 1
        if 0 < arr <= top:
            return TimerSetting(psc, arr, clock_hz)
    raise DerivationError(f"period {period_s} s does not fit a {counter_bits}-bit timer at {clock_hz} Hz")


def nrf_timer(base_hz: int, period_s: float, counter_bits: int, dividers: Sequence[int]) -> TimerSetting:
    """nRF TIMER: f = base/2^PRESCALER; compare value CC = ticks-1 (SHORTS clears on compare).

    ``dividers`` are the timer's ``Timer.prescalers`` (1, 2, 4 … 512 on the nRF52840:
    PRESCALER 0..9, PS §6.30). ``prescaler`` in the result is the register value (the exponent);
    ``reload`` the CC value.
    """
    top = (1 << counter_bits) - 1
    for divider in sorted(int(d) for d in dividers):
        ticks = round(base_hz / divider * period_s)
        if 1 < ticks <= top + 1:
            return TimerSetting(divider.bit_length() - 1, ticks - 1, base_hz // divider)
    raise DerivationError(f"period {period_s} s does not fit a {counter_bits}-bit nRF TIMER")


def systick_reload(core_hz: int, rate_hz: int) -> int:
    """SysTick LOAD for ``rate_hz`` interrupts per second (24-bit counter)."""
    reload = round(core_hz / rate_hz) - 1
    if not 0 < reload <= 0xFFFFFF:
        raise DerivationError(f"SysTick cannot tick at {rate_hz} Hz from a {core_hz} Hz core clock")
    return reload


@dataclass(frozen=True)
class WatchdogSetting:
    """Prescaler register value, divider, reload and the timeout they give."""

    prescaler_code: int
    divider: int
    reload: int
    timeout_ms: float


def iwdg(timeout_ms: int, facts: Watchdog) -> WatchdogSetting:
    """STM32 IWDG: the smallest prescaler whose reload fits; PR code = index in the prescaler list.

    timeout = divider·(RLR+1)/f_LSI (RM0090 §19.3.3 / RM0433 §45.3).
    """
    if facts.clock_hz is None or facts.reload_max is None:
        raise DerivationError("the IWDG facts give no clock_hz/reload_max")
    clock = float(facts.clock_hz)
    reload_max = facts.reload_max
    for code, divider in enumerate(facts.prescalers):
        reload = round(timeout_ms / 1000 * clock / divider) - 1
        if 0 <= reload <= reload_max:
            return WatchdogSetting(code, int(divider), reload, divider * (reload + 1) / clock * 1000)
    raise DerivationError(f"watchdog timeout {timeout_ms} ms is outside the IWDG range")


def nrf_wdt(timeout_ms: int, facts: Watchdog) -> WatchdogSetting:
    """nRF WDT: timeout = (CRV+1)/32768 s, CRV ≥ ``crv_min`` (PS §6.36)."""
    if facts.clock_hz is None or facts.crv_min is None:
        raise DerivationError("the WDT facts give no clock_hz/crv_min")
    clock = float(facts.clock_hz)
    crv = round(timeout_ms / 1000 * clock) - 1
    if crv < facts.crv_min:
        raise DerivationError(f"watchdog timeout {timeout_ms} ms is below the WDT minimum")
    return WatchdogSetting(0, 1, crv, (crv + 1) / clock * 1000)


def poll_budget(core_hz: int, timeout_us: int) -> int:
    """Iterations of a bounded poll loop that take at least ``timeout_us`` at ``core_hz``.

    Capped at 2^32 - 1 (the C counter is 32-bit): at most ~18 minutes at 16 MHz, ~4.5 at 64 MHz.
    """
    return min(0xFFFFFFFF, max(1, core_hz // 1_000_000 * timeout_us // POLL_LOOP_CYCLES))


@dataclass(frozen=True)
class PinRef:
    """A pin split into port and number: ``PD12`` → (``GPIOD``, 12); ``P0.13`` → (``P0``, 13)."""

    name: str
    port: str
    number: int
    port_index: int


def pin_ref(name: str) -> PinRef:
    stm = _PIN_STM32.match(name)
    if stm:
        return PinRef(name, f"GPIO{stm['port']}", int(stm["pin"]), ord(stm["port"]) - ord("A"))
    nrf = _PIN_NRF.match(name)
    if nrf:
        return PinRef(name, f"P{nrf['port']}", int(nrf["pin"]), int(nrf["port"]))
    raise DerivationError(f"pin {name!r} is neither STM32 (PA9) nor nRF (P0.13) naming")
