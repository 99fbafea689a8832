"""Questions asked of the target facts, answered in one place.

Obligations, op specs (to say where they can be realized), lowerings and the observation all ask
these instead of keeping private copies: which board LED a plan name means, which devicetree labels
a board has, which DMA controllers serve a request, how the console receiver reaches memory by DMA,
which watchdog the chip has, and every derived quantity an obligation compares against (clock rates
per framework, the baud rate a UART really produces, counter and prescaler ranges, IRQ priority
ranges). Clock-derived answers take a ``Clocks`` view (the clocks one plan runs: the framework's defaults
with a ``core_clock`` request laid over them, ``plan.clocks.plan_clocks``), never a framework name alone.
Every answer is a function of the facts; nothing here tests a target id. A missing fact yields ``None``
and the caller does not judge what it cannot compute.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rac_fw.domains.firmware.facts.chip import Watchdog
from rac_fw.domains.firmware.facts.load import interrupts, peripheral
from rac_fw.domains.firmware.facts.model import BoardButton, BoardLed, BoardPwmLed, DmaController, Pin, Target

# --- board LEDs and buttons -------------------------------------------------------------------------


def normalized(name: str) -> str:
    """Board names and labels compared the way a plan may spell them: ``LD1_GREEN``/``pwm-led0``."""
    return name.lower().replace("-", "_")


@dataclass(frozen=True)
class Ambiguous:
    """A plan name that, spelled loosely, matches two different board items."""

    name: str
    candidates: tuple[BoardLed | BoardButton, ...]
    """The items it could mean, in rule order (alias, node label, vendor name)."""


def _alias_node(target: Target, name: str) -> str | None:
    return target.board.dt_aliases.get(name)


#: A ``pwm-leds`` node of the board (kept under this name for the callers that ask for it).
PwmLed = BoardPwmLed


def pwm_leds(target: Target) -> list[BoardPwmLed]:
    """The board's ``pwm-leds`` nodes, in the pack's order."""
    return list(target.board.pwm_leds)


def pwm_led_on(target: Target, pin: str) -> PwmLed | None:
    """The ``pwm-leds`` node driving ``pin``, if the board has one."""
    return next((p for p in pwm_leds(target) if p.pin == pin), None)


def _pwm_led_item(target: Target, items: tuple[Any, ...], name: str) -> Any:
    """The board LED a ``pwm-leds`` node label or alias names (``pwm_led0`` → LED1 on the nRF52840-DK)."""
    key = normalized(name)
    for entry in pwm_leds(target):
        if key in {normalized(entry.node), normalized(entry.alias or "")}:
            return next((x for x in items if x.pin == entry.pin), None)
    return None


def _lookup(target: Target, items: tuple[Any, ...], name: str) -> Any:
    """The one rule for board LED and button names.

    Exact spellings first, in this order: a devicetree alias (``led1`` → the node it points at), a
    node label, the board's vendor name (``LED1``, ``B1_USER``). Last, for LEDs, the label or alias of the
    board's ``pwm-leds`` node that dims it (``pwm_led0``). Only when no exact spelling matches
    are names compared case- and dash-insensitively; if that loose comparison reaches two different
    items the answer is :class:`Ambiguous` (callers turn it into an error with both candidates).

    So on the nRF52840-DK ``led1`` is the devicetree alias led1 = LED2 (P0.14), ``LED1`` is LED1
    (P0.13), and ``Led1`` is ambiguous.
    """
    node = _alias_node(target, name)
    for found in (
        next((x for x in items if node is not None and x.dt_label == node), None),
        next((x for x in items if x.dt_label == name), None),
        next((x for x in items if x.name == name), None),
    ):
        if found is not None:
            return found
    key = normalized(name)
    loose_node = next((n for a, n in target.board.dt_aliases.items() if normalized(a) == key), None)
    matches: list[Any] = []
    for item in items:
        if (
            (loose_node is not None and item.dt_label == loose_node)
            or (item.dt_label and normalized(item.dt_label) == key)
            or normalized(item.name) == key
        ) and item not in matches:
            matches.append(item)
    if len(matches) > 1:
        return Ambiguous(name, tuple(matches))
    if matches:
        return matches[0]
    return _pwm_led_item(target, items, name) if items is target.board.leds else None


def board_led(target: Target, name: str) -> BoardLed | None:
    """The board LED a plan name means (None when unknown or ambiguous: see :func:`ambiguous_board_name`)."""
    found = _lookup(target, target.board.leds, name)
    return found if isinstance(found, BoardLed) else None


def board_button(target: Target, name: str) -> BoardButton | None:
    """The board button a plan name means (None when unknown or ambiguous)."""
    found = _lookup(target, target.board.buttons, name)
    return found if isinstance(found, BoardButton) else None


def ambiguous_board_name(target: Target, name: str, led: bool) -> Ambiguous | None:
    """Set when ``name`` matches two board items only when compared loosely (``Led1``)."""
    found = _lookup(target, target.board.leds if led else target.board.buttons, name)
    return found if isinstance(found, Ambiguous) else None


def exact_name(item: BoardLed | BoardButton) -> str:
    """How a plan names ``item``: its devicetree label, else its vendor name, spelled as a plan name may
    be (lowercase, ``_`` for ``-``: ``pwm-led0`` → ``pwm_led0``, which the lookup finds again)."""
    return normalized(item.dt_label or item.name)


# --- which pins a plan may take ----------------------------------------------------------------------


def board_wiring(target: Target, pin: str) -> str | None:
    """What the board wires ``pin`` to (LED, button, an on-board chip), or None if nothing."""
    if any(led.pin == pin for led in target.board.leds):
        return "a board LED"
    if any(button.pin == pin for button in target.board.buttons):
        return "a board button"
    return target.board.reserved_pins.get(pin)


def pin_free(target: Target, name: str) -> bool:
    """The one rule for a pin a plan may take for its own use: not reserved by the chip (SWD, crystal,
    flash), not a strapping pin, needing nothing switched first (NFC), and wired to nothing on the board.

    The observation's free-pin list and the pin relaxations the obligations offer both ask this, so a
    pin shown free is never then rejected (GPIO45 on the ESP32-S3 is a strapping pin: not free).
    """
    pin = target.pins.get(name)
    return (
        pin is not None
        and not pin.reserved
        and not pin.strapping
        and not pin.requires
        and board_wiring(target, name) is None
    )


# --- devicetree labels --------------------------------------------------------------------------------


def dt_labels(target: Target) -> set[str]:
    """Every node label the board devicetree defines (node labels plus alias and chosen targets)."""
    board = target.board
    return set(board.dt_node_labels) | set(board.dt_aliases.values()) | set(board.dt_chosen.values())


def has_dt_label(target: Target, *patterns: str) -> bool:
    """The board has a node label or alias matching one of the regular expressions ``patterns``."""
    known = dt_labels(target) | set(target.board.dt_aliases)
    return any(re.fullmatch(p, label) for p in patterns for label in known)


def console_uart_known(target: Target) -> bool:
    """The board has a console UART (from the board facts or the devicetree's chosen console)."""
    return target.board.console is not None or "zephyr,console" in target.board.dt_chosen


# --- DMA routing --------------------------------------------------------------------------------------


def request_instance(request: str) -> str:
    """``USART2_RX`` → ``USART2``: the peripheral instance behind a DMA request name."""
    for suffix in ("_RX", "_TX"):
        if request.endswith(suffix):
            return request[: -len(suffix)]
    return request


def muxed_requests(target: Target, controller: DmaController) -> set[str] | None:
    """The requests a request multiplexer (``Target.dmamux``) feeds ``controller``, or None when
    no multiplexer feeds it. STM32H7: DMAMUX1 feeds DMA1/DMA2, DMAMUX2 feeds BDMA, each with its own
    request lines (the SVD's ``DMAREQ_ID`` enumerations), so a D3 request such as ``LPUART1_RX``
    reaches BDMA only."""
    found: set[str] | None = None
    for mux in target.dmamux.values():
        if controller.name in mux.controllers:
            found = (found or set()) | set(mux.requests)
    return found


def _serves(target: Target, controller: DmaController, request: str) -> bool:
    """``controller`` can take ``request``: from its multiplexer's request lines when one feeds it,
    else from its ``peripherals`` list (empty: any)."""
    instance = request_instance(request)
    lines = muxed_requests(target, controller)
    if lines is not None:
        return request in lines or instance in {request_instance(line) for line in lines}
    return (
        not controller.peripherals
        or instance in controller.peripherals
        or ((instance.startswith("ADC") or instance == "SAADC") and any("ADC" in p for p in controller.peripherals))
    )


def serving_controllers(target: Target, request: str) -> list[DmaController]:
    """Controllers that can serve ``request``, best first (ADC mapping fact, explicit list, "any")."""
    instance = request_instance(request)
    names = target.adc.dma.get(instance, ()) if target.adc is not None else ()
    ordered = [c for n in names for c in target.dma if c.name == n]
    ordered += [c for c in target.dma if instance in c.peripherals]
    ordered += [c for c in target.dma if not c.peripherals]
    ordered += [c for c in target.dma if any("ADC" in p for p in c.peripherals)]
    return [c for c in dict.fromkeys(ordered) if _serves(target, c, request)]


@dataclass(frozen=True)
class MuxLine:
    """A DMA request routed through a request multiplexer (STM32H7 DMAMUX)."""

    mux: str
    line: int
    """The multiplexer's request-line ID for the request (RM0433 Table 121/122)."""
    controllers: tuple[str, ...]
    """Controllers behind this multiplexer."""
    first_channels: dict[str, int]
    """Controller → the mux channel of its first stream."""


def dmamux_line(target: Target, request: str) -> MuxLine | None:
    """The multiplexer line of ``request`` from ``Target.dmamux``, or None when no mux routes it."""
    for name, mux in target.dmamux.items():
        if request in mux.requests:
            return MuxLine(name, mux.requests[request], tuple(mux.controllers), dict(mux.controllers))
    return None


def request_routable(target: Target, request: str) -> bool:
    """The facts route ``request``: a fixed (stream, channel) mapping or a multiplexer line."""
    return any(c.routes(request) for c in target.dma) or dmamux_line(target, request) is not None


def adc_dma_routable(target: Target) -> bool:
    """Some ADC unit of the chip has a DMA request route in the facts."""
    units = target.adc.units if target.adc is not None else ()
    return any(request_routable(target, unit) for unit in units)


@dataclass(frozen=True)
class RxDmaPath:
    """How the console UART's receiver reaches memory by DMA, decided from the facts."""

    request: str
    """DMA request name in the facts' spelling (``USART3_RX``, ``UARTE0_RX``)."""
    controller: DmaController
    stream: int | None = None
    """Fixed-mapping stream (STM32F4 RM0090 Tables 42/43); None for the other kinds."""
    channel: int | None = None
    """Fixed-mapping channel, or the multiplexer channel when ``mux`` is set."""
    mux: MuxLine | None = None

    @property
    def builtin(self) -> bool:
        """The UART owns its DMA (nRF EasyDMA: a controller without allocatable channels)."""
        return self.controller.channels == 0


def console_rx_dma(target: Target) -> RxDmaPath | None:
    """The DMA path of the console receiver, in the order the facts allow (None: no known path).

    A controller without allocatable channels is built into the peripheral; a fixed request mapping
    (``DmaController.routes``) gives stream and channel; a request multiplexer (``Target.dmamux``) gives
    the line, using the controller's last stream so the low ones stay free. The controller (and mux)
    must be nodes of the board devicetree when the board has one. Without such a fact: None, not a guess.
    """
    console = target.board.console
    if console is None:
        return None
    request = f"{console.uart}_RX"
    known = dt_labels(target)
    controllers = serving_controllers(target, request)
    for controller in controllers:
        if controller.channels == 0:
            return RxDmaPath(request, controller)
        fixed = controller.routes(request)
        if fixed and controller.name.lower() in known:
            return RxDmaPath(request, controller, stream=fixed[0][0], channel=fixed[0][1])
    mux = dmamux_line(target, request)
    if mux is not None:
        for controller in controllers:
            first = mux.first_channels.get(controller.name)
            if first is not None and {controller.name.lower(), mux.mux.lower()} <= known:
                return RxDmaPath(request, controller, channel=first + max(controller.channels, 1) - 1, mux=mux)
    return None


def memory_to_memory_controllers(target: Target) -> list[DmaController]:
    """DMA controllers that can copy memory to memory."""
    return [d for d in target.dma if d.memory_to_memory]


# --- UART drivers ---------------------------------------------------------------------------------------


def uart_api_modes(target: Target, framework: str, instance: str) -> frozenset[str] | None:
    """The UART API modes (``poll``, ``interrupt``, ``async``) the framework's driver of ``instance``
    supports, when the facts restrict them (``UartInstance.api_modes``); None: all."""
    entry = target.uart.instances.get(instance) if target.uart is not None else None
    modes = entry.api_modes.get(framework) if entry is not None else None
    return frozenset(modes) if modes is not None else None


# --- peripherals --------------------------------------------------------------------------------------


def has_registers(target: Target, instance: str, *registers: str) -> bool:
    """``instance`` is in the SVD facts and has every named register (flattened names, as in device.h)."""
    if instance not in target.peripherals:
        return False
    flat = (r.name.replace("[", "").replace("]", "") for r in peripheral(target.id, instance).registers)
    names = {re.sub(r"\W", "_", name) for name in flat}
    return all(r in names for r in registers)


def has_field(target: Target, instance: str, name: str) -> bool:
    """``instance`` is in the SVD facts and one of its registers has a field ``name`` (``RTCAPBEN``)."""
    if instance not in target.peripherals:
        return False
    return any(f.name == name for r in peripheral(target.id, instance).registers for f in r.fields)


def watchdog_instance(target: Target) -> tuple[str, Watchdog] | None:
    """The independent watchdog the facts describe with a timeout model (IWDG*, WDT), and its facts."""
    for key, facts in target.watchdogs.items():
        if not (key.startswith("IWDG") or key == "WDT"):
            continue
        instance = key if key in target.peripherals else re.sub(r"\d+$", "", key)
        if instance in target.peripherals:
            return instance, facts
    return None


# --- clocks -------------------------------------------------------------------------------------------


def clock_hz(target: Target, name: str | None, framework: str) -> int | None:
    """Frequency of clock ``name`` after ``framework``'s clock setup (None if not stated)."""
    domain = target.clock(name) if name else None
    return None if domain is None else domain.default_hz.get(framework)


#: The clock domains that clock the core, first stated wins (the CPU/SysTick clock).
CORE_CLOCKS = ("CPU", "HCLK", "SYSCLK")


def core_clock_hz(target: Target, framework: str) -> int | None:
    """The CPU/SysTick clock of ``framework``'s default clock setup: ``CPU``, else ``HCLK``, else ``SYSCLK``."""
    return Clocks(target, framework).core_hz()


@dataclass(frozen=True)
class Clocks:
    """The clock tree one plan runs under one framework: the framework's clock setup (``default_hz``) with the
    domains a plan's operation sets laid over it (a ``core_clock`` request: its PLL's system, bus and timer
    clocks; ``plan.clocks.plan_clocks`` builds the view for a plan). Every rule and lowering that derives
    timing from a clock (UART divisors, counter prescalers, SPI dividers, SysTick, cycle-counter wraps, CAN bit
    timing) asks this view, so a core clock request moves all of them."""

    target: Target
    framework: str
    set_hz: Mapping[str, int] = field(default_factory=dict)
    """Clock domain → the frequency the plan sets it to (empty: the framework's defaults)."""

    def hz(self, name: str | None) -> int | None:
        """Frequency of clock ``name`` as the plan runs it (None if not stated)."""
        if name and name in self.set_hz:
            return self.set_hz[name]
        return clock_hz(self.target, name, self.framework)

    def core_hz(self) -> int | None:
        """The CPU/SysTick clock as the plan runs it: ``CPU``, else ``HCLK``, else ``SYSCLK``."""
        return next((hz for name in CORE_CLOCKS if (hz := self.hz(name))), None)


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


def uart_baud(clocks: Clocks, instance: str, baud: int) -> BaudResult | None:
    """The rate instance ``instance`` really produces for ``baud`` (None when the facts cannot say).

    Two fact shapes: a ``baud_table`` of discrete settings (nRF UARTE: requested → actual, rates not
    in the table cannot be set), or a divider ``actual = f·2^fraction_bits / k`` with integer ``k``
    from ``oversampling[0]·2^fraction_bits`` (the mode the lowerings configure) to ``65535·2^fraction_bits``
    (STM32 USART BRR at 16x oversampling; ESP32 UART integer + 4-bit fractional divider), at the UART's clock
    as the plan runs it (``clocks``).
    """
    uart = clocks.target.uart
    if uart is None:
        return None
    if uart.baud_table:
        return BaudResult(baud, float(uart.baud_table.get(baud, 0.0)), None)
    entry = uart.instances.get(instance)
    if entry is None:
        return None
    hz = entry.clock_hz or clocks.hz(entry.clock)
    if not hz:
        return None
    scale = 1 << uart.divider_fraction_bits
    # The first listed oversampling is the one the lowerings configure (STM32: 16x; 8x exists but no
    # lowering selects it), so the smallest divider is that one, not the hardware's absolute minimum.
    k_min = (uart.oversampling or (1,))[0] * scale
    k_max = uart.divider_max * scale
    k = min(max(round(hz * scale / baud), k_min), k_max)
    return BaudResult(baud, hz * scale / k, int(hz))


STANDARD_BAUDS = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1_000_000, 2_000_000)


def achievable_bauds(clocks: Clocks, instance: str, limit_percent: float) -> list[int]:
    """Standard rates this UART reaches within ``limit_percent`` (table entries for table UARTs)."""
    uart = clocks.target.uart
    table = uart.baud_table if uart is not None else {}
    candidates = sorted(table) if table else list(STANDARD_BAUDS)
    good = []
    for rate in candidates:
        result = uart_baud(clocks, instance, rate)
        if result is not None and result.actual and result.error_percent <= limit_percent:
            good.append(rate)
    return good


def uart_clock(target: Target, instance: str) -> str | None:
    """The clock domain feeding ``instance``'s baud-rate generator (``APB1``), None when not stated."""
    entry = target.uart.instances.get(instance) if target.uart is not None else None
    return entry.clock if entry is not None else None


def uart_instances(target: Target) -> set[str]:
    """The UART instances the facts describe."""
    return set(target.uart.instances) if target.uart is not None else set()


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


def _counter(name: str, prescalers: tuple[int, ...], prescaler_bits: int | None, hz: int, top: int) -> Counter:
    if prescalers:
        return Counter(name, hz, top, discrete=tuple(sorted(prescalers)))
    return Counter(name, hz, top, prescaler_max=1 << (prescaler_bits if prescaler_bits is not None else 16))


def hardware_timer(clocks: Clocks, name: str) -> Counter | None:
    """The general-purpose timer ``name`` (``Target.timers``) at its clock as the plan runs it."""
    entry = clocks.target.timers.get(name)
    if entry is None:
        return None
    hz = clocks.hz(entry.clock)
    if not hz:
        return None
    return _counter(name, entry.prescalers, entry.prescaler_bits, int(hz), (1 << entry.bits) - 1)


def timer_names(target: Target) -> list[str]:
    """Hardware timers from the facts usable as a plan timer source, widest counter first."""
    named = [(n, e) for n, e in target.timers.items() if e.kind not in ("rtc", "system")]
    return [n for n, _ in sorted(named, key=lambda item: -item[1].bits)]


def kernel_tick_hz(target: Target, framework: str) -> int | None:
    """The RTOS kernel tick under ``framework`` (``Target.kernel_ticks``).

    A per-chip fact because the SoC decides it: Zephyr runs 32768 ticks/s on the nRF52 RTC, the
    kernel default 10000 on a tickless SysTick, 100 on native_sim. None when the facts do not say.
    """
    entry = target.kernel_ticks.get(framework)
    return entry.sys_clock_ticks_per_sec if entry is not None else None


def systick(clocks: Clocks) -> Counter | None:
    """The Cortex-M SysTick: a 24-bit down-counter on the core clock as the plan runs it (None on other cores)."""
    hz = clocks.core_hz()
    if not clocks.target.core.arch.startswith("cortex-m") or not hz:
        return None
    return Counter("SysTick", hz, (1 << 24) - 1)


TIMER_CHANNEL = re.compile(r"^(TIM\d+)_CH\d+$")


def pwm_unit(clocks: Clocks, pin: str | None) -> Counter | None:
    """The PWM counter that can drive ``pin``: its timer channel (STM32) or the PWM block (nRF, ESP)."""
    target = clocks.target
    pwm = target.pwm
    if pwm is not None and pwm.countertop_max is not None:  # nRF PWM: 15-bit COUNTERTOP, power-of-two prescaler
        hz = clocks.hz(pwm.base_clock)
        if hz:
            return _counter("PWM", pwm.prescalers, None, int(hz), pwm.countertop_max)
    for name, unit in (pwm.units if pwm is not None else {}).items():  # ESP32 LEDC: freq · 2^resolution ≤ clock
        if unit.max_resolution_bits is not None:
            hz = unit.clock_hz or clocks.hz(unit.clock)
            if hz:
                return Counter(name, int(hz), 1 << unit.max_resolution_bits, prescaler_max=1023)
    found = target.pins.get(pin) if pin else None
    for function in found.functions if found else ():
        match = TIMER_CHANNEL.match(function.signal)
        counter = hardware_timer(clocks, match.group(1)) if match else None
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
    entries = list(target.watchdogs.items())
    own = [(n, e) for n, e in entries if e.framework == framework]
    generic = [(n, e) for n, e in entries if e.framework is None]
    for name, entry in own + generic:
        if entry.min_timeout_ms is not None and entry.max_timeout_ms is not None:
            return WatchdogRange(name, float(entry.min_timeout_ms), float(entry.max_timeout_ms))
    return None


@dataclass(frozen=True)
class IrqRange:
    lowest: int
    highest: int
    why: str


def irq_range(target: Target, framework: str) -> IrqRange | None:
    """Priorities an interrupt that may call the RTOS can use (``irq_priority`` numbering)."""
    nvic = target.nvic
    if nvic is not None:
        rules = nvic.kernel_levels.get(framework)
        if rules is not None:
            return IrqRange(
                0,
                rules.max_irq_priority,
                f"{framework} reserves the levels above {rules.max_irq_priority} "
                f"(_IRQ_PRIO_OFFSET {rules.irq_prio_offset})",
            )
        return IrqRange(0, nvic.levels - 1, f"{nvic.levels} NVIC priority levels")
    interrupts = target.interrupts
    if interrupts is not None and interrupts.rtos_safe_max_level is not None:
        top = interrupts.rtos_safe_max_level
        return IrqRange(1, top, f"levels 1-{top} may call FreeRTOS *FromISR APIs (4+ need assembly)")
    return None


def adc_unit_of(signal: str) -> str:
    """``ADC2_CH3`` / ``ADC1_IN5`` / ``ADC3_INP18`` → the unit; ``AIN0`` → ``SAADC``-style single unit."""
    head = signal.split("_", 1)[0]
    return head if head.startswith("ADC") else "ADC"


def adc_units(target: Target) -> tuple[str, ...]:
    """The chip's ADC units, first the default (empty without ADC facts)."""
    return target.adc.units if target.adc is not None else ()


def dcache_active(target: Target, framework: str) -> bool:
    """The core has a D-cache and ``framework`` enables it (``Target.cache_enabled``; default yes)."""
    if target.core.dcache is None:
        return False
    return target.cache_enabled.get(framework, True)


def instance_clock(target: Target, instance: str) -> str | None:
    """The clock domain the facts give peripheral ``instance`` (a UART, I2C/SPI controller, timer or
    watchdog): its kernel clock, e.g. USART2 → ``APB1``; None when no table names it."""
    if target.uart is not None and instance in target.uart.instances:
        return target.uart.instances[instance].clock
    for bus in (target.i2c, target.spi):
        if bus is not None and instance in bus.instances:
            return bus.instances[instance].clock
    for table in (target.timers, target.watchdogs):
        if instance in table:
            return table[instance].clock
    return None


def natural_order(name: str) -> tuple[object, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.findall(r"\d+|\D+", name))


def free_pins(target: Target, taken: set[str], signal: str, near: str | None = None) -> list[Pin]:
    """Pins that can carry ``signal`` and are not taken, reserved, board-wired, strapping or NFC.

    Sorted with the pins of ``near``'s port first, digital signals away from analog-capable pins, then
    in natural order, so the suggestion is the closest pin that costs nothing else.
    """
    port = re.sub(r"\d+$", "", near or "")
    usable = [p for p in target.pins.values() if p.name not in taken and pin_free(target, p.name)]
    usable = [p for p in usable if carries(p, signal)]
    keep_analog = signal != "ANALOG"
    return sorted(
        usable,
        key=lambda p: (re.sub(r"\d+$", "", p.name) != port, keep_analog and bool(p.analog), natural_order(p.name)),
    )


def carries(pin: Pin, signal: str) -> bool:
    """Whether ``pin`` can carry ``signal``; plain GPIO is possible on every pin, analog on analog pins."""
    if signal == "GPIO":
        return True
    if signal == "ANALOG":
        return bool(pin.analog)
    return pin.can_carry(signal)


def hal_rtos(target: Target) -> bool:
    """Whether the STM32Cube HAL lowering can run FreeRTOS (CMSIS-RTOS2) on ``target``: its chip facts name
    the HAL driver and how the RTOS shares the chip with it (``hal.rtos``: the timer the HAL time base moves
    to, the syscall interrupt priority). Thread and kernel operations are available on ``hal`` only then."""
    return target.hal is not None and target.hal.rtos is not None


# --- ADC clock (synchronous) ----------------------------------------------------------------------
class AdcClock(NamedTuple):
    """The synchronous ADC clock one clock tree gives (``adc_clock``)."""

    hz: int
    """The ADC clock: ``bus_hz`` over ``prescaler``."""
    prescaler: int
    """The divider chosen (``ADC_CLOCK_SYNC_PCLK_DIV<prescaler>``)."""
    bus: str
    """The clock domain it divides (``Adc.clock``: HCLK on the STM32H7, APB2 on the F4)."""
    bus_hz: int
    limit_hz: int
    """``Adc.max_clock_hz``: the fastest clock the converter takes."""

    @property
    def fits(self) -> bool:
        """Whether even this, the largest fitting or else the largest divider, keeps the ADC within its limit."""
        return self.hz <= self.limit_hz


def adc_clock(clocks: Clocks) -> AdcClock | None:
    """The synchronous ADC clock: the bus clock ``Adc.clock`` names over the smallest prescaler
    (``Adc.clock_prescalers``, /1 excluded: on the STM32H7 it needs HPRE = 2) that keeps it within
    ``Adc.max_clock_hz``, else over the largest (then ``fits`` is false: E_ADC_CLOCK); None without ADC or clock
    facts. What the HAL lowering configures and what an acquisition time in microseconds is converted to cycles
    with, at the bus clock as the plan runs it."""
    facts = clocks.target.adc
    if facts is None:
        return None
    bus = facts.clock or "APB2"
    bus_hz = clocks.hz(bus)
    if not bus_hz:
        return None
    limit = facts.max_clock_hz or 36_000_000
    prescalers = sorted(p for p in facts.clock_prescalers or (2, 4, 6, 8) if p > 1)
    prescaler = next((p for p in prescalers if bus_hz // p <= limit), prescalers[-1])
    return AdcClock(bus_hz // prescaler, prescaler, bus, bus_hz, limit)


class SoftwareIrq(NamedTuple):
    """The interrupt line software may pend for its own use, and the vector name its handler has."""

    line: int
    handler: str


def software_irq(target: Target) -> SoftwareIrq | None:
    """The chip's software-pendable line (``nvic.software_irq``) and its handler: the SVD's vector name when
    the SVD names the line, else ``SoftwareIrq_IRQHandler`` (a line reserved on this part; the bare-metal
    vector table names it so)."""
    if target.nvic is None or target.nvic.software_irq is None:
        return None
    line = target.nvic.software_irq
    named = next((name for number, name, _ in interrupts(target.id) if number == line), None)
    handler = f"{re.sub(r'[^A-Za-z0-9_]', '_', named)}_IRQHandler" if named else "SoftwareIrq_IRQHandler"
    return SoftwareIrq(line, handler)
