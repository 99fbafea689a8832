"""Lowering to the STM32Cube HAL (STM32F4, STM32H7): a CubeMX-shaped ``Core/`` tree, with FreeRTOS
through CMSIS-RTOS2 when an operation needs kernel threads.

Every number in the generated C is derived here from the plan and the target facts: the PLL and bus
dividers that reproduce the clock facts for framework ``hal``, flash wait states, alternate-function
numbers (``target.pins[...].functions``), timer prescaler/period, IWDG prescaler/reload, I2C timing,
SPI baud prescaler, DMA stream/channel and the interrupt vector names. Templates only arrange C.

Without an RTOS the application is a super-loop: periodic work runs when ``HAL_GetTick()`` passes its
deadline, interrupt handlers only record events (volatile counters and a ring) that the loop consumes.

**The RTOS is chosen by the plan's operations, not by a flag.** An operation whose ``hal`` realization
renders from an RTOS template (``templates/hal/rtos*.c.j2``: threads, queues, semaphores, mutexes, event
flags) needs kernel threads; then, and only then, the tree runs FreeRTOS through CMSIS-RTOS2 the STM32Cube
way (``cmsis_os2.h``; ``osKernelInitialize``, the objects and threads, ``osKernelStart`` last), the super-loop
becomes the lowest-priority thread ``rac_loop``, ``source: kernel`` timers become ``osTimerNew`` software
timers, and the HAL's 1 ms time base moves from SysTick (the kernel's tick) to the timer the chip facts name
(``hal.rtos.timebase``). A plan without such an operation lowers exactly as before. Why automatic: kernel
threads are a consequence of what the plan states (a semaphore between two threads), so there is no second
statement to get wrong. The receipt says which operation chose it. ``FreeRTOSConfig.h`` takes its values
from the facts (core clock, NVIC priority bits and the syscall priority, the heap from the objects the plan
creates, checked against the default RAM).

DMA buffers go to the region ``placement.buffer_needs`` picks (section
``.dma.<REGION>.<buffer>``, the bare-metal linker convention), aligned as it says; where the region is
D-cached under this framework the loop cleans the cache before a memory-side DMA read and invalidates
it after the DMA has written (``SCB_CleanDCache_by_Addr`` / ``SCB_InvalidateDCache_by_Addr``).

An ``adc_scan`` with a ``buffer`` runs the ADC in scan mode over the plan's channels (ranks in plan
order) and moves the sequence by DMA (``HAL_ADC_Start_DMA``, one normal-mode transfer per interval); the
request is routed from the facts (STM32F4 ``DmaController.routes``, STM32H7 ``Target.dmamux`` request
lines), and the loop reads the samples only after the completion callback has flagged the transfer
(capability ``adc_scan_dma``). Without a buffer the CPU polls each channel.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rac_fw.contract import Evidence, Receipt
from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.bind import BoundBuild, BoundPlan, UnboundName
from rac_fw.domains.firmware.facts.chip import HalDriver, HalRtos
from rac_fw.domains.firmware.facts.clock import flash_setting, hal_clock_tree, pll_setting
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import (
    Clocks,
    adc_clock,
    dcache_active,
    dmamux_line,
    free_pins,
    hardware_timer,
    request_routable,
)
from rac_fw.domains.firmware.lower import (
    Lowered,
    LoweringError,
    op_macros,
    realize_sections,
    register_framework,
    template_env,
    unsupported_operations,
    with_contributed,
)
from rac_fw.domains.firmware.lower.hal_behaviour import HalBehaviourHost
from rac_fw.domains.firmware.ops.events import reactions_to
from rac_fw.domains.firmware.placement import buffer_needs, default_ram
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.verify.console import operation_label

_PIN = re.compile(r"^P([A-K])(\d+)$")

#: Template files (``templates/hal/<name>.c.j2``) whose operations run as kernel threads: a ``hal``
#: realization naming one of them makes the tree an RTOS application (the hook other op families use).
RTOS_TEMPLATE_PREFIX = "rtos"
#: FreeRTOS control-block sizes on a 32-bit Cortex-M with every option the generated configuration sets,
#: rounded up, plus heap_4's 8-byte block header: what the heap budget counts per object.
_TCB_BYTES, _QUEUE_BYTES, _EVENT_GROUP_BYTES, _TIMER_BYTES, _HEAP_HEADER = 128, 96, 48, 64, 8
#: Kernel-created tasks: the idle task (configMINIMAL_STACK_SIZE 128 words) and the timer service task
#: (configTIMER_TASK_STACK_DEPTH 256 words) with its command queue (configTIMER_QUEUE_LENGTH 10 × 16 B).
_IDLE_STACK_WORDS, _TIMER_STACK_WORDS, _TIMER_QUEUE_LENGTH = 128, 256, 10
#: Smallest thread stack handed to osThreadNew (FreeRTOS' Cortex-M minimum, 128 words) and the loop thread's.
_MIN_STACK_BYTES, _LOOP_STACK_BYTES = 512, 2048
#: RAM kept outside the heap in the default region: the main stack (the linker's _estack) and HAL statics.
_RAM_RESERVE_BYTES = 8192
#: CMSIS-RTOS2 priorities the plan's thread priorities map onto (cmsis_os2.h: osPriorityLow = 8; plan
#: priorities are FreeRTOS-style, higher = more urgent, clamped to 1..31, so every thread stays below the
#: timer service task at osPriorityHigh = 40).
_OS_PRIORITY_LOW, _PLAN_PRIORITY_MAX = 8, 31
#: SCL rate an I2C answering as a target is initialized for: the controller on the bus clocks it, but the
#: i2c2 generation still derives its data setup/hold (TIMINGR SCLDEL/SDADEL) from it, and the i2c1
#: generation's HAL_I2C_Init requires one; 100 kHz gives standard-mode setup/hold times.
_I2C_TARGET_HZ = 100_000
_ANALOG = re.compile(r"^ADC(\d)_INP?(\d+)$")
_TIM_CHANNEL = re.compile(r"^(TIM\d+)_CH(\d)$")


def _unsupported(where: str | None, message: str) -> LoweringError:
    """The plan is valid but this lowering cannot realize it here: located E_TARGET_UNSUPPORTED evidence."""
    return LoweringError([Evidence(code="E_TARGET_UNSUPPORTED", message=message, location=where)])


@dataclass(frozen=True)
class Pin:
    """A pin as HAL code names it."""

    name: str
    port: str
    number: int

    @property
    def gpio(self) -> str:
        return f"GPIO{self.port}"

    @property
    def mask(self) -> str:
        return f"GPIO_PIN_{self.number}"


def _pin(target: Target, name: str, where: str) -> Pin:
    match = _PIN.match(name)
    if match is None or name not in target.pins:
        raise _unsupported(where, f"{name!r} is not a pin of {target.id}")
    return Pin(name, match.group(1), int(match.group(2)))


def _af(target: Target, pin: str, signal: str, where: str) -> str:
    """``GPIO_AF7_USART2``: the alternate function that routes ``signal`` to ``pin``, from the pin facts."""
    number = target.pins[pin].af(signal)
    if number is None:
        raise _unsupported(where, f"{pin} cannot carry {signal} (no alternate function in the pin facts)")
    return f"GPIO_AF{number}_{signal.rsplit('_', 1)[0]}"


# --- clocks ---------------------------------------------------------------------------------------
def _hz(clocks: Clocks, name: str) -> int:
    """Clock ``name`` as the plan runs it (``BoundBuild.clocks``: a ``core_clock`` request's PLL, else the facts)."""
    value = clocks.hz(name)
    if not value:
        raise _unsupported(None, f"{clocks.target.id}: the clock facts give no {name} frequency for framework hal")
    return int(value)


def _divider(parent: int, child: int, allowed: tuple[int, ...], what: str) -> int:
    ratio = parent // child if child else 0
    if ratio not in allowed or parent != ratio * child:
        raise _unsupported(None, f"{what}: {parent} Hz / {child} Hz is not one of the dividers {allowed}")
    return ratio


def _pll(target: Target, sysclk: int) -> dict[str, Any]:
    """PLL M/N/P/Q (and the H7 PLL1's R, input range and VCO range) for ``sysclk`` from the HSE: the setting
    ``facts.clock.pll_setting`` solves for every framework, in the HAL's ``RCC_PLLInitTypeDef`` terms."""
    setting = pll_setting(target, "hal", sysclk)
    names = hal_clock_tree(target)
    if setting is None or names is None:
        raise _unsupported(None, f"{target.id}: no PLL setting gives {sysclk} Hz from the HSE (facts: pll, clocks)")
    # A tree that keeps no Q output (the H7 PLL1) divides Q and R like P: no output runs above the core clock,
    # and no peripheral the lowering sets up takes them (SPI1-3 move to per_ck).
    q = setting.q if setting.q is not None else setting.p
    vco_in = Fraction(setting.source_hz, setting.m)
    return {"m": setting.m, "n": setting.n, "p": setting.p, "q": q, "r": setting.p, "hse_state": names.hse_state,
            "vci": names.vci(vco_in), "vco_range": names.vco_range}  # fmt: skip


def _clocks(target: Target, hal: HalDriver, clocks: Clocks) -> dict[str, Any]:
    """The SystemClock_Config parameters that reproduce the clocks the plan runs (``clocks``: the facts' ``hal``
    defaults, or a ``core_clock`` request's PLL setting): HSI, or the HSE PLL where the facts give its ranges
    (``Target.pll``); per-domain prescalers where the RCC has them; the regulator scale and flash wait states of
    ``flash.voltage_scales``."""
    sysclk, hclk = _hz(clocks, "SYSCLK"), _hz(clocks, "HCLK")
    hsi = _hz(clocks, "HSI")
    view: dict[str, Any] = {"sysclk": sysclk, "hclk": hclk, "hsi": hsi}
    hse = clocks.hz("HSE")
    if sysclk == hsi:
        view["source"] = "HSI"
    elif hse and target.pll is not None:
        view["source"] = "PLL"
        view["hse"] = int(hse)
        view["pll"] = _pll(target, sysclk)
    else:
        raise _unsupported(None, f"{target.id}: only HSI or HSE-PLL clock trees are generated; "
                            f"SYSCLK {sysclk} Hz is neither")  # fmt: skip
    if target.bus_prescalers is None:
        raise _unsupported(None, f"{target.id}: no bus prescaler facts (bus_prescalers)")
    ahb, apb = target.bus_prescalers.ahb, target.bus_prescalers.apb
    cpu = sysclk
    if hal.rcc_domains:
        cpu = _hz(clocks, "CPU")
        view["d1cpre"] = _divider(sysclk, cpu, ahb, "SYSCLK/CPU")
        view["hpre"] = _divider(cpu, hclk, ahb, "CPU/HCLK")
        for key, name in (("apb1", "APB1"), ("apb2", "APB2"), ("apb3", "APB3"), ("apb4", "APB4")):
            view[key] = _divider(hclk, _hz(clocks, name), apb, f"HCLK/{name}")
    else:
        view["hpre"] = _divider(sysclk, hclk, ahb, "SYSCLK/HCLK")
        view["apb1"] = _divider(hclk, _hz(clocks, "APB1"), apb, "HCLK/APB1")
        view["apb2"] = _divider(hclk, _hz(clocks, "APB2"), apb, "HCLK/APB2")
    found = flash_setting(target, cpu, hclk)
    if found is None:
        raise _unsupported(None, f"{target.id}: no voltage scale and flash wait states for a {cpu} Hz CPU and "
                           f"{hclk} Hz HCLK in the facts (flash.voltage_scales)")  # fmt: skip
    names = hal_clock_tree(target)
    view.update(scale=found.scale, latency=found.latency, overdrive=names is not None and names.overdrive_scale ==
                found.scale)  # fmt: skip
    return view


# --- the build --------------------------------------------------------------------------------------
@dataclass
class HalBuild(BoundBuild, HalBehaviourHost):
    """Everything one plan needs, collected per peripheral so shared instances are initialized once."""

    bound: BoundPlan
    hal: HalDriver
    """The chip's HAL driver facts: which init-structure shapes its IP blocks take."""
    views: list[dict[str, Any]] = field(default_factory=list)
    modules: set[str] = field(default_factory=lambda: {"RCC", "GPIO", "CORTEX", "FLASH", "PWR", "DMA"})
    ports: set[str] = field(default_factory=set)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    exti: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    uarts: dict[str, dict[str, Any]] = field(default_factory=dict)
    timers: dict[str, dict[str, Any]] = field(default_factory=dict)
    adcs: dict[str, dict[str, Any]] = field(default_factory=dict)
    i2cs: dict[str, dict[str, Any]] = field(default_factory=dict)
    spis: dict[str, dict[str, Any]] = field(default_factory=dict)
    dmas: list[dict[str, Any]] = field(default_factory=list)
    buffers: dict[str, dict[str, Any]] = field(default_factory=dict)
    watchdog: dict[str, Any] | None = None
    chosen: dict[str, str] = field(default_factory=dict)
    """Signal → pin picked by the lowering because the plan named none (reported in the receipt)."""
    files: dict[str, str] = field(default_factory=dict)
    """Whole files an operation or plan block contributes (a linker-script fragment, a FreeRTOSConfig.h)."""
    rtos: dict[str, Any] | None = None
    """The kernel set-up when an operation needs threads (``_rtos``); None: a super-loop."""
    threads: list[dict[str, Any]] = field(default_factory=list)
    """Every kernel thread an operation's role runs in (``thread``), in creation order."""
    locks: dict[str, bool] = field(default_factory=dict)
    """Named mutexes several operations share (lock name → priority inheritance)."""
    heap_bytes: int = 0
    """Heap the kernel objects the operations create take (queues with storage, semaphores…)."""
    i2c_targets: list[dict[str, Any]] = field(default_factory=list)
    """The views of the operations answering as I2C targets: the HAL's I2C callbacks dispatch over them."""
    notes: list[str] = field(default_factory=list)
    """Receipt notes an operation adds (what the lowering derived that the plan did not state)."""
    handlers: list[dict[str, str]] = field(default_factory=list)
    """Interrupt handlers an operation adds to the it.c file: vector ``irq``, the HAL dispatcher ``call``
    and the ``type``/``handle`` it is called with (the RTC wake-up timer's ``HAL_RTCEx_WakeUpTimerIRQHandler``)."""
    soft_irqs: list[dict[str, Any]] = field(default_factory=list)
    """Software-pended lines (``sw_irq``): it.c's ``handler`` calls main.c's ``call``; main() installs it."""
    behaviour: str | None = None
    """The behaviour's C (``sections/behaviour_hal.py``), placed in main.c before main() (None: the plan has none)."""
    noinit: bool = False
    """The behaviour persists values in retained RAM: the README asks the linker script for a ``.noinit`` section."""
    behaviour_line_bytes: int = 0
    """The longest line the behaviour prints (its line buffer): one ``rac_report`` transmit must fit its bound."""

    @property
    def cache_on(self) -> bool:
        """Whether the generated main() enables the I/D-caches: the facts say so for framework ``hal``
        (``Target.cache_enabled``, as ST's Cube examples for the Cortex-M7 do); DMA buffers in
        cacheable regions then get clean/invalidate calls (``buffer_needs``)."""
        return dcache_active(self.target, "hal")

    # --- what op specs' HAL view functions call --------------------------------------------------------
    def base_view(self, index: int, op: Any) -> dict[str, Any]:
        """The names every view has; the op spec's view function fills in the rest and returns it.

        ``period``: the operation's own period field, if it has one; ``ticks``: its loop code reads
        ``now`` (``HAL_GetTick()`` once per pass), which only then main() fetches; ``report``: its name on
        the console (``rac: <report> ok``), the one the bare-metal, Zephyr and ESP-IDF apps print.
        """
        sym = op.name or f"{op.op}_{index}"
        period = next(
            (getattr(op, f) for f in ("interval_ms", "repeat_interval_ms", "feed_interval_ms") if getattr(op, f, None)),
            None,
        )
        return {"op": op, "sym": sym, "kind": op.op, "value": spec(op.op).produces_value(op),
                "label": c_string(sym), "period": period, "ticks": period is not None,
                "report": c_string(operation_label(index, op.op, op.name))}  # fmt: skip

    @staticmethod
    def unsupported(where: str | None, message: str) -> LoweringError:
        return _unsupported(where, message)

    def pin(self, name: str, where: str) -> Pin:
        return _pin(self.target, name, where)

    def input_view(self, view: dict[str, Any], button: str, pull: str | None, where: str) -> Pin:
        """A button input: its pin, polarity and pull (the plan's, else what the wiring needs)."""
        pin, active_low = self.io(button, "button", where)
        self.ports.add(pin.port)
        pull = pull or ("up" if active_low else "none")
        view.update(
            pin=pin,
            active_low=active_low,
            pull={"up": "GPIO_PULLUP", "down": "GPIO_PULLDOWN", "none": "GPIO_NOPULL"}[pull],
        )
        return pin

    def uart_rx_view(self, view: dict[str, Any], op: Any, ring: int, where: str) -> None:
        """Interrupt-driven reception on the operation's UART into a power-of-two ring of ``ring`` bytes."""
        view["uart"] = self.uart(op.uart, op.baud, where)
        if view["uart"].get("rx_sym"):
            raise _unsupported(where, f"{view['uart']['instance']} already receives for {view['uart']['rx_sym']}")
        self.uart_irq(view["uart"], getattr(op, "irq_priority", None))
        view["ring"] = 2 ** math.ceil(math.log2(ring))
        view["uart"]["rx_sym"] = view["sym"]

    def bus_view(self, view: dict[str, Any], op: Any, bus: str, where: str) -> Any:
        """The I2C/SPI controller of ``op.device``, initialized once with its pins and clock; the device."""
        device = self.plan.device(op.device)
        if device is None or device.bus != bus:
            raise _unsupported(f"{where}.device", f"{op.device!r} is not an {bus} device")
        instance = device.controller
        if bus == "i2c":
            view["bus"] = self.i2c(instance, device.frequency_hz, where)
            if view["bus"]["target"] is not None:
                raise _unsupported(where, f"{instance} answers as an I2C target for {view['bus']['target']['sym']}; "
                                   "talk to the device on another controller")  # fmt: skip
            return device
        if instance not in self.spis:
            pins = [self.af_pin(self.signal_pin(f"{instance}_{s}", where), f"{instance}_{s}", where)
                    for s in ("SCK", "MISO", "MOSI")]  # fmt: skip
            self.modules.add("SPI")
            self.spis[instance] = {"instance": instance, "handle": f"h{instance.lower()}", "pins": pins,
                                   "hz": device.frequency_hz, "mode": getattr(op, "mode", 0),
                                   "prescaler": _spi_prescaler(self, instance, device.frequency_hz, where)}  # fmt: skip
        view["bus"] = self.spis[instance]
        return device

    def i2c(self, instance: str, hz: int, where: str) -> dict[str, Any]:
        """I2C controller ``instance`` with its pins (pulled up, open drain) and clock, initialized once.

        An i2c2-generation I2C takes TIMINGR from the kernel clock the facts name (i2c.instances.<instance>.clock);
        the i2c1 generation takes ClockSpeed directly. ``own_address`` (OwnAddress1, the 7-bit address shifted
        left) and ``irq`` (event/error vectors) are set when the controller answers as a target (``target``).
        """
        if instance not in self.i2cs:
            pins = [self.af_pin(self.signal_pin(f"{instance}_{s}", where), f"{instance}_{s}", where, "GPIO_PULLUP")
                    for s in ("SCL", "SDA")]  # fmt: skip
            self.modules.add("I2C")
            timing = _i2c_timing(_i2c_kernel(self, instance, where), hz) if self.hal.i2c_timing_register else None
            self.i2cs[instance] = {"instance": instance, "handle": f"h{instance.lower()}", "pins": pins, "hz": hz,
                                   "mode": 0, "timing": timing, "own_address": 0, "irq": None,
                                   "target": None}  # fmt: skip
        return self.i2cs[instance]

    def i2c_target(self, view: dict[str, Any], instance: str, address: int, priority: int, where: str) -> None:
        """Make I2C ``instance`` answer at 7-bit ``address`` for ``view`` (listen mode, its event and error
        interrupts from the SVD facts); it then serves no device as a controller."""
        if instance in self.i2cs:
            owner = self.i2cs[instance]["target"]
            users = f"{owner['sym']} answers on it" if owner else "the plan talks to a device on it"
            raise _unsupported(where, f"{instance} cannot answer as a target: {users}; use another controller")
        bus = self.i2c(instance, _I2C_TARGET_HZ, where)
        bus.update(own_address=address << 1, target=view,
                   irq={"ev": self.irq(instance, f"{instance}_EV"), "er": self.irq(instance, f"{instance}_ER"),
                        "priority": priority})  # fmt: skip
        self.i2c_targets.append(view)
        view.update(bus=bus, targets=self.i2c_targets)

    def adc_view(self, view: dict[str, Any], op: Any, channels: list[Any], where: str) -> None:
        """ADC channels by pin: the unit each belongs to (initialized once), its channel and pin."""
        view["channels"] = []
        for channel in channels:
            pin_name = getattr(channel, "pin", None)
            facts = self.target.pins.get(pin_name) if pin_name else None
            match = next((m for a in (facts.analog if facts else ()) if (m := _ANALOG.match(a))), None)
            if match is None or pin_name is None:
                raise _unsupported(f"{where}.channel", f"needs an analog input pin of {self.target.id}")
            unit = self.adc(f"ADC{match.group(1)}")
            if unit["scan"] is not None:
                raise _unsupported(f"{where}.channel", f"{unit['instance']} scans by DMA for {unit['scan']['sym']}; "
                                   "use a pin of another ADC")  # fmt: skip
            owner = unit["oversampling"]
            if owner is not None and owner["sym"] != view["sym"]:
                raise _unsupported(f"{where}.channel", f"{unit['instance']} oversamples every conversion for "
                                   f"{owner['sym']}; use a pin of another ADC")  # fmt: skip
            if view["sym"] not in unit["users"]:
                unit["users"].append(view["sym"])
            pin = _pin(self.target, pin_name, where)
            self.ports.add(pin.port)
            unit["pins"].append(pin)
            unit["resolution"] = op.resolution_bits
            view["channels"].append({"adc": unit, "channel": int(match.group(2)), "pin": pin})
        view["interval_ms"] = getattr(op, "interval_ms", None)
        view["max_code"] = (1 << op.resolution_bits) - 1

    def pwm_view(self, view: dict[str, Any], op: Any, where: str) -> dict[str, Any]:
        """The timer channel driving ``op.output`` at ``op.period_us``; returns the channel entry."""
        pin, active_low = self.io(op.output, "led", where)
        timers = self.target.timers
        signal = next((f.signal for f in self.target.pins[pin.name].functions
                       if (m := _TIM_CHANNEL.match(f.signal)) and m.group(1) in timers), None)  # fmt: skip
        if signal is None:
            raise _unsupported(f"{where}.output", f"{pin.name} has no timer channel in the pin facts")
        match = _TIM_CHANNEL.match(signal)
        assert match is not None
        timer = self.timer(match.group(1), where)
        psc, arr = self.fit_timer(timer["instance"], op.period_us / 1e6, where)
        if timer["pwm"] and (timer["psc"], timer["arr"]) != (psc, arr):
            raise _unsupported(where, f"{timer['instance']} already runs another PWM period")
        timer.update(psc=psc, arr=arr)
        channel = {"pin": self.af_pin(pin, signal, where), "channel": f"TIM_CHANNEL_{match.group(2)}",
                   "polarity": "TIM_OCPOLARITY_LOW" if active_low else "TIM_OCPOLARITY_HIGH", "pulse": 0}  # fmt: skip
        timer["pwm"].append(channel)
        view.update(timer=timer, channel=channel, top=arr + 1)
        return channel

    def timer_view(self, view: dict[str, Any], op: Any, oneshot: bool, where: str) -> None:
        """A basic/general timer with its update interrupt at ``op``'s period (the plan's or a free one)."""
        instance = op.source if op.source not in ("kernel", "systick") else self.free_timer(where)
        timer = self.timer(instance, where)
        psc, arr = self.fit_timer(instance, op.period_s, where)
        timer.update(psc=psc, arr=arr, base=view)
        timer["irq"] = {"name": self.timer_irq(instance),
                        "priority": 5 if op.irq_priority is None else op.irq_priority}  # fmt: skip
        view.update(timer=timer, oneshot=oneshot, os_timer=False)

    def iwdg(self, timeout_ms: int, where: str) -> dict[str, Any]:
        return _iwdg(self, timeout_ms, where)

    # --- kernel objects (RTOS applications only) --------------------------------------------------------
    def kernel(self, where: str) -> dict[str, Any]:
        """The kernel set-up; asking for it outside an RTOS application is a defect of the op spec (its
        ``hal`` realization must render from an RTOS template, which is what turns the kernel on)."""
        if self.rtos is None:
            raise RuntimeError(f"{where}: kernel object outside an RTOS application (template not rtos*)")
        return self.rtos

    def thread(self, name: str | None, role: str, where: str) -> dict[str, Any]:
        """A kernel thread for one role of an operation, played by plan thread ``name``: its function,
        ``osThreadAttr_t`` name, stack (the plan's, at least FreeRTOS' minimum) and CMSIS-RTOS2 priority."""
        self.kernel(where)
        thread = self.plan.thread(name) if name else None
        stack = max(thread.stack_bytes if thread else _LOOP_STACK_BYTES, _MIN_STACK_BYTES)
        stack = math.ceil(stack / 8) * 8
        level = min(max(thread.priority, 1), _PLAN_PRIORITY_MAX) if thread else 1
        entry = {"task": f"{role}_thread", "attr": f"{role}_attr", "name": c_string(role[:15]),
                 "stack": stack, "priority": f"(osPriority_t)(osPriorityLow + {level})",
                 "level": _OS_PRIORITY_LOW + level}  # fmt: skip
        self.threads.append(entry)
        self.heap_bytes += stack + _TCB_BYTES + 2 * _HEAP_HEADER
        return entry

    def wait(self, timeout: int | str) -> str:
        """A CMSIS-RTOS2 timeout argument for a plan timeout in ms (``forever``: ``osWaitForever``)."""
        return "osWaitForever" if timeout == "forever" else f"{self.ticks(int(timeout))}U"

    def ticks(self, ms: int) -> int:
        """Kernel ticks for ``ms`` milliseconds at the configured tick rate, rounded up (0 stays 0)."""
        rate = self.kernel("ticks")["tick_rate_hz"]
        return math.ceil(ms * rate / 1000)

    def kernel_object(self, kind: str, storage: int = 0) -> None:
        """Count one queue/semaphore/mutex (``queue``), event group or timer, with its storage, in the heap."""
        size = {"queue": _QUEUE_BYTES, "event_group": _EVENT_GROUP_BYTES, "timer": _TIMER_BYTES}[kind]
        self.heap_bytes += size + storage + _HEAP_HEADER

    def lock(self, name: str, inherit: bool) -> str:
        """The C name of the shared mutex ``name`` (created once; priority inheritance if any user asks)."""
        if name not in self.locks:
            self.kernel_object("queue")
        self.locks[name] = self.locks.get(name, False) or inherit
        return f"{name}_lock"

    def os_timer_view(self, view: dict[str, Any], op: Any) -> None:
        """A ``source: kernel`` timer in an RTOS application: a CMSIS-RTOS2 software timer (``osTimerNew``),
        whose callback runs in the timer service thread."""
        self.kernel_object("timer")
        view.update(os_timer=True, oneshot=op.oneshot, period_ticks=max(1, self.ticks(math.ceil(op.period_s * 1000))))

    def irq(self, owner: str, *names: str) -> str:
        """The vector name (CMSIS ``<name>_IRQn`` / ``<name>_IRQHandler``) of the first of ``names``
        that the SVD facts attribute to peripheral ``owner``. The stm32-rs SVDs spell DMA streams
        ``DMA1_STR0`` where the CMSIS header says ``DMA1_Stream0``; the CMSIS spelling is returned."""
        found = self.target.peripherals.get(owner)
        known = {i.name for i in found.interrupts} if found else set()
        for name in names:
            for spelling in (name, name.replace("_Stream", "_STR")):
                if spelling in known:
                    return name
        raise _unsupported(None, f"{self.target.id}: {owner} has no interrupt {' / '.join(names)} in the SVD facts")

    def timer_irq(self, instance: str) -> str:
        """The update interrupt of timer ``instance``: its own vector, else the shared one whose name has
        an ``UP`` part (``TIM1_UP_TIM10``), else the only one it has (``TIM6_DAC``, ``TIM8_BRK_TIM12``)."""
        found = self.target.peripherals.get(instance)
        names = [i.name for i in found.interrupts] if found else []
        ranked = sorted(names, key=lambda n: (n != instance, "UP" not in n.split("_")))
        if ranked and (ranked[0] == instance or "UP" in ranked[0].split("_") or len(ranked) == 1):
            return self.irq(instance, ranked[0])
        raise _unsupported(None, f"{self.target.id}: no update interrupt of {instance} in the SVD facts")

    def io(self, name: str, kind: str, where: str) -> tuple[Pin, bool]:
        """A board LED/button (name or devicetree label) or a plan pin → (pin, active_low)."""
        try:
            endpoint = self.bound.endpoint("led" if kind == "led" else "button", name)
        except UnboundName:
            raise _unsupported(where, f"{name!r} is neither a board {kind} nor a resources.pins entry") from None
        return _pin(self.target, endpoint.pin, where), endpoint.active_low

    def signal_pin(self, signal: str, where: str) -> Pin:
        """The plan pin declared with ``signal``; else the first free pin the pin facts route it to
        (``facts.query.free_pins``: not in the bound plan's ``pins_in_use``, reserved, board-wired or
        strapping), noted in the receipt."""
        use = next((p for p in self.plan.resources.pins if p.function == signal), None)
        if use is not None:
            return _pin(self.target, use.pin, where)
        if signal in self.chosen:
            return _pin(self.target, self.chosen[signal], where)
        taken = set(self.bound.pins_in_use) | set(self.chosen.values())
        free = free_pins(self.target, taken, signal)
        if not free:
            raise _unsupported(where, f"no free pin can carry {signal}; declare one in resources.pins")
        self.chosen[signal] = free[0].name
        return _pin(self.target, free[0].name, where)

    def af_pin(self, pin: Pin, signal: str, where: str, pull: str = "GPIO_NOPULL") -> dict[str, Any]:
        self.ports.add(pin.port)
        return {"pin": pin, "af": _af(self.target, pin.name, signal, where), "pull": pull, "signal": signal}

    # --- shared peripherals -------------------------------------------------------------------------
    def uart(self, instance: str | None, baud: int | None, where: str) -> dict[str, Any]:
        console = self.target.board.console
        name = instance or (console.uart if console else "")
        if not name:
            raise _unsupported(where, f"{self.target.id} has no console UART; name one")
        if name not in self.uarts:
            is_console = console is not None and name == console.uart
            tx = (
                _pin(self.target, console.tx, where) if is_console and console else self.signal_pin(f"{name}_TX", where)
            )
            rx = (
                _pin(self.target, console.rx, where) if is_console and console else self.signal_pin(f"{name}_RX", where)
            )
            self.modules.add("UART")
            baud_default = console.baud if is_console and console else 115200
            self.uarts[name] = {
                "instance": name, "handle": f"h{name.lower()}", "baud": baud_default,
                "pins": [self.af_pin(tx, f"{name}_TX", where), self.af_pin(rx, f"{name}_RX", where, "GPIO_PULLUP")],
                "irq": None, "rx_dma": None, "clock": name,
            }  # fmt: skip
        if baud:
            self.uarts[name]["baud"] = baud
        return self.uarts[name]

    def uart_irq(self, uart: dict[str, Any], priority: int | None) -> None:
        uart["irq"] = {"name": self.irq(uart["instance"], uart["instance"]),
                       "priority": 5 if priority is None else priority}  # fmt: skip

    @property
    def timebase(self) -> str | None:
        """The timer the HAL time base runs on in an RTOS application (no operation may claim it)."""
        return self.rtos["timebase"]["instance"] if self.rtos is not None else None

    def timer(self, instance: str, where: str) -> dict[str, Any]:
        if instance == self.timebase:
            raise _unsupported(
                where,
                f"{instance} is the HAL time base while FreeRTOS drives SysTick; use another timer (or source: kernel)",
            )
        if instance not in self.timers:
            facts = self.target.timers.get(instance)
            if facts is None:
                raise _unsupported(where, f"{instance} is not a timer in the {self.target.id} facts")
            self.modules.add("TIM")
            self.timers[instance] = {"instance": instance, "handle": f"h{instance.lower()}", "pwm": [],
                                     "base": None, "irq": None, "bits": facts.bits}  # fmt: skip
        return self.timers[instance]

    def fit_timer(self, instance: str, period_s: float, where: str) -> tuple[int, int]:
        """(PSC, ARR) for ``period_s`` on ``instance``: smallest prescaler whose count fits the counter."""
        counter = hardware_timer(self.clocks, instance)
        if counter is None:
            raise _unsupported(where, f"no clock facts for {instance} under framework hal")
        fitted = counter.fit(period_s)  # the obligations judge periods with the same rule
        if fitted is None or fitted[1] < 2:
            raise _unsupported(
                where, f"{period_s} s does not fit {instance} ({counter.clock_hz} Hz, top {counter.top})"
            )
        prescaler, ticks = fitted
        return prescaler - 1, ticks - 1

    def free_timer(self, where: str) -> str:
        """A timer for a plan timer with ``source: kernel``: basic timers first, then unused general ones."""
        timers = self.target.timers
        ordered = sorted(timers, key=lambda n: (timers[n].kind != "basic", -timers[n].bits))
        for name in ordered:
            if timers[name].kind in ("basic", "general") and name not in self.timers and name != self.timebase:
                return str(name)
        raise _unsupported(where, "no free hardware timer left for a software timer")

    def adc(self, unit: str) -> dict[str, Any]:
        if unit not in self.adcs:
            self.modules.add("ADC")
            facts = self.target.adc
            clock = adc_clock(self.clocks)
            if facts is None or clock is None:
                raise _unsupported(None, f"{self.target.id}: no ADC (clock) facts")
            # Synchronous ADC clock (facts.query.adc_clock): the bus clock over the smallest fitting prescaler.
            divider = f"ADC_CLOCK_SYNC_PCLK_DIV{clock.prescaler}"
            # A unit may share its bus clock gate (H7 ADC1/ADC2: __HAL_RCC_ADC12_CLK_ENABLE).
            gate = self.hal.clock_gates.get(unit, unit)
            # ``users``: the operations converting on this unit; ``scan``: the adc_scan view that owns its
            # sequence by DMA (then it is the only user).
            self.adcs[unit] = {"instance": unit, "handle": f"h{unit.lower()}", "prescaler": divider, "pins": [],
                               "clock": gate, "vref_mv": facts.vref_mv or 3300, "resolution": 12,
                               "users": [], "scan": None, "hz": clock.hz, "oversampling": None}  # fmt: skip
        return self.adcs[unit]

    def dma_stream(
        self, request: str | None, controller: str | None, where: str, among: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """Allocate a DMA stream: for a request on a chip with fixed request mappings (STM32F4,
        ``DmaController.requests``) the first free (stream, channel) the facts list for it; otherwise
        (memory-to-memory, STM32H7 DMAMUX) the next free DMA1/DMA2 stream, limited to the controllers
        ``among`` when given (those a DMAMUX feeds)."""
        taken = {(d["controller"], d["stream"]) for d in self.dmas}
        if request is not None and any(c.requests for c in self.target.dma):
            routes = [(c.name, stream, channel) for c in self.target.dma if controller in (None, c.name)
                      for stream, channel in c.routes(request)]  # fmt: skip
            if not routes:
                raise _unsupported(where, f"no DMA stream of {self.target.id} carries request {request} (facts)")
            untaken = [r for r in routes if (r[0], r[1]) not in taken]
            ctrl, stream, channel = (untaken or routes)[0]
        else:
            capable = [c.name for c in self.target.dma if c.memory_to_memory or request is not None]
            names = [controller] if controller else [c for c in ("DMA2", "DMA1") if c in capable]
            names = [c for c in names if not among or c in among]
            # Memory-to-memory takes the highest free stream, leaving the low ones to fixed F4 mappings.
            streams = range(8) if request is not None else range(7, -1, -1)
            free = [(c, s) for c in names for s in streams if (c, s) not in taken]
            if not free:
                raise _unsupported(where, f"no free DMA stream on {', '.join(names)}")
            (ctrl, stream), channel = free[0], 0
        if (ctrl, stream) in taken:
            raise _unsupported(where, f"{ctrl} stream {stream} is already used by another operation")
        entry = {"controller": ctrl, "stream": stream, "channel": channel, "request": request,
                 "instance": f"{ctrl}_Stream{stream}", "handle": f"hdma_{ctrl.lower()}_s{stream}",
                 "irq": self.irq(ctrl, f"{ctrl}_Stream{stream}")}  # fmt: skip
        self.dmas.append(entry)
        return entry

    def buffer(self, name: str, where: str) -> dict[str, Any]:
        if name not in self.buffers:
            buffer = self.plan.buffer(name)
            needs = buffer_needs(self.plan, self.target, "hal", name)
            if buffer is None or needs is None:
                raise _unsupported(where, f"buffer {name!r} is not placed (unknown buffer or no region)")
            maintain = needs.cache_maintenance
            line = needs.line_bytes or 1
            padded = math.ceil(buffer.size_bytes / line) * line if maintain else buffer.size_bytes
            self.buffers[name] = {
                "name": name, "size": buffer.size_bytes, "padded": padded, "align": needs.alignment_bytes,
                "region": needs.region, "section": f".dma.{needs.region}.{name}", "element": buffer.element_bytes,
                "maintain": maintain,
            }  # fmt: skip
        return self.buffers[name]

    def adc_dma(self, view: dict[str, Any], where: str) -> None:
        """Make ``view`` (an adc_scan with a buffer) the DMA scan of its ADC unit: one unit, no other
        user, 16/32-bit buffer elements, one per channel, and a DMA stream the facts route the request to."""
        units = {c["adc"]["instance"] for c in view["channels"]}
        if len(units) != 1:
            raise _unsupported(f"{where}.channels", f"a DMA scan converts one ADC's sequence; these channels "
                               f"belong to {', '.join(sorted(units))}: pick pins of one unit")  # fmt: skip
        unit = view["channels"][0]["adc"]
        others = [u for u in unit["users"] if u != view["sym"]]
        if others:
            raise _unsupported(where, f"{unit['instance']} also converts for {', '.join(others)}; a DMA scan owns "
                               "its ADC's sequence: use another unit or scan without a buffer")  # fmt: skip
        buffer, count = view["buffer"], len(view["channels"])
        if buffer["element"] not in (2, 4) or buffer["size"] < count * buffer["element"]:
            raise _unsupported(f"{where}.buffer", f"{buffer['name']} must hold {count} elements of 2 or 4 bytes "
                               "(the ADC data register is wider than a byte), one per channel")  # fmt: skip
        instance = unit["instance"]
        if not request_routable(self.target, instance):
            raise _unsupported(where, f"the {self.target.id} facts route no DMA request for {instance}")
        line = dmamux_line(self.target, instance) if not any(c.requests for c in self.target.dma) else None
        mux = (line.mux, line.line, line.controllers) if line is not None else None
        dma = self.dma_stream(instance, None, where, among=mux[2] if mux else ())
        dma.update(owner=view, priority=5 if getattr(view["op"], "irq_priority", None) is None
                   else view["op"].irq_priority, mux=mux)  # fmt: skip
        unit["scan"] = view
        view.update(dma=dma, count=count, width={2: "HALFWORD", 4: "WORD"}[buffer["element"]])


def _template(kind: str) -> str:
    """The template file (``templates/hal/<template>.c.j2``) whose macro renders operation ``kind``."""
    realization = spec(kind).realization("hal")
    return realization.template if realization is not None else ""


def _view(build: HalBuild, index: int, op: Any) -> dict[str, Any]:
    """The view of one operation, built by its op spec's view function (which starts from ``base_view``)."""
    realization = spec(op.op).realization("hal")
    if realization is None or realization.view is None:
        raise LookupError(f"{op.op} has no STM32 HAL view in its op spec")
    view: dict[str, Any] = realization.view(build, index, op)
    view.setdefault("ticks", False)
    view.setdefault("behaviour", build.behaviour_uses(index))
    return view


def _report_bytes(build: HalBuild) -> int:
    """The longest console-protocol line with its NUL: ``rac: <label> ok value=<int32>\\r\\n`` (the label
    literal's quotes stand in for the separators), the size of the buffer ``rac_ok`` formats it in."""
    longest = max((len(v["report"]) for v in build.views), default=0)
    return len("rac: ") + longest + len(" ok value=-2147483648\r\n") + 1


def _uart_tx_timeout_ms(build: HalBuild) -> int:
    """HAL_UART_Transmit timeout: twice the time the longest text the loop sends (a behaviour's line among them)
    takes on the slowest UART (10 bits per byte at 8N1) plus 10 ms for the 1 ms tick's granularity and interrupts
    served meanwhile, so a healthy transmit never times out and a stuck one is bounded."""
    texts = [int(v.get("text_bytes", 1)) for v in build.views]
    longest = max([_report_bytes(build), *texts, build.behaviour_line_bytes])
    slowest = min(int(u["baud"]) for u in build.uarts.values())
    return math.ceil(2 * 10 * longest * 1000 / slowest) + 10


def _i2c_timing(kernel_hz: int, scl_hz: int) -> int:
    """I2C_TIMINGR for the STM32H7/F7/L4 I2C (RM0433 §47.4.9): PRESC, SCLDEL, SDADEL, SCLH, SCLL.

    Data setup/hold times follow the I2C-bus spec minima for the speed mode (standard ≤ 100 kHz, fast
    ≤ 400 kHz, fast-plus above); SCL low/high split 1:1 in standard mode and 2:1 in fast modes. The
    synchronization delays the formula leaves out only lengthen the period, so SCL never exceeds the plan.
    """
    if scl_hz <= 100_000:
        t_presc, scldel_s, sdadel_s, low_share = 250e-9, 1250e-9, 500e-9, 0.5
    elif scl_hz <= 400_000:
        t_presc, scldel_s, sdadel_s, low_share = 125e-9, 500e-9, 125e-9, 2 / 3
    else:
        t_presc, scldel_s, sdadel_s, low_share = 62.5e-9, 125e-9, 0.0, 2 / 3
    presc = min(15, max(0, math.ceil(kernel_hz * t_presc) - 1))
    tick = (presc + 1) / kernel_hz
    while (1 / scl_hz) / tick > 512 and presc < 15:
        presc += 1
        tick = (presc + 1) / kernel_hz
    cycles = math.ceil((1 / scl_hz) / tick)
    scll = min(255, max(1, math.ceil(cycles * low_share) - 1))
    sclh = min(255, max(1, cycles - (scll + 1) - 1))
    scldel = min(15, max(0, math.ceil(scldel_s / tick) - 1))
    sdadel = min(15, max(0, math.ceil(sdadel_s / tick)))
    return (presc << 28) | (scldel << 20) | (sdadel << 16) | (sclh << 8) | scll


def _i2c_kernel(build: HalBuild, instance: str, where: str) -> int:
    """The I2C kernel clock of ``instance`` from ``Target.i2c`` (H7: rcc_pclk1 for I2C1-3, rcc_pclk4 for I2C4)."""
    i2c = build.target.i2c
    entry = i2c.instances.get(instance) if i2c is not None else None
    if entry is None or entry.clock is None:
        raise _unsupported(where, f"the {build.target.id} facts give no kernel clock for {instance} (i2c.instances)")
    return _hz(build.clocks, entry.clock)


def _spi_prescaler(build: HalBuild, instance: str, hz: int, where: str) -> int:
    """The smallest SPI baud prescaler whose SCK does not exceed the device's clock.

    Kernel clock and prescalers from ``Target.spi`` (F4: SPI1 on APB2, SPI2/3 on APB1; H7: SPI1-3 on
    per_ck, which SystemClock_Config selects, SPI4/5 on APB2, SPI6 on APB4).
    """
    facts = build.target.spi
    entry = facts.instances.get(instance) if facts is not None else None
    if facts is None or entry is None or entry.clock is None:
        raise _unsupported(where, f"the {build.target.id} facts give no kernel clock for {instance} (spi.instances)")
    kernel = _hz(build.clocks, entry.clock)
    for prescaler in sorted(facts.prescalers or (2, 4, 8, 16, 32, 64, 128, 256)):
        if kernel / prescaler <= hz:
            return prescaler
    raise _unsupported(where, f"{hz} Hz is below the slowest SCK of {instance} ({kernel / prescaler:.0f} Hz)")


def _iwdg(build: HalBuild, timeout_ms: int, where: str) -> dict[str, Any]:
    """IWDG prescaler and reload for ``timeout_ms`` from the watchdog facts (LSI clock, 12-bit reload)."""
    watchdogs = build.target.watchdogs
    name = next((n for n in watchdogs if n.startswith("IWDG")), None)
    if name is None:
        raise _unsupported(where, f"no IWDG in the {build.target.id} watchdog facts")
    facts = watchdogs[name]
    clock = int(facts.clock_hz or _hz(build.clocks, facts.clock or "LSI"))
    for prescaler in facts.prescalers or (4, 8, 16, 32, 64, 128, 256):
        reload = round(timeout_ms / 1000 * clock / prescaler) - 1
        if 0 <= reload <= (facts.reload_max if facts.reload_max is not None else 4095):
            return {"instance": name, "prescaler": int(prescaler), "reload": reload, "clock_hz": clock}
    raise _unsupported(where, f"{timeout_ms} ms is outside the {name} range")


def _rtos_reason(build: HalBuild) -> str | None:
    """The first operation whose ``hal`` realization renders from an RTOS template: why the tree runs FreeRTOS."""
    for index, op in enumerate(build.plan.operations):
        realization = spec(op.op).realization("hal")
        if realization is not None and realization.template.startswith(RTOS_TEMPLATE_PREFIX):
            return f"operations[{index}] ({op.op})"
    return None


def _rtos(build: HalBuild, facts: HalRtos, reason: str) -> dict[str, Any]:
    """The kernel set-up before the operations' views: tick rate and the HAL time base's timer (1 ms)."""
    where = "hal.rtos.timebase"
    instance = facts.timebase
    if instance not in build.target.timers:
        raise _unsupported(None, f"{build.target.id}: the HAL time base {instance} is not a timer in the facts")
    psc, arr = build.fit_timer(instance, 1 / 1000, where)
    build.modules.add("TIM")
    timebase = {"instance": instance, "handle": f"h{instance.lower()}", "psc": psc, "arr": arr,
                "irq": build.timer_irq(instance)}  # fmt: skip
    return {"reason": reason, "tick_rate_hz": facts.tick_rate_hz, "timebase": timebase}


def _lock_views(build: HalBuild) -> list[dict[str, Any]]:
    """The shared mutexes main() creates before the operations' objects (C name, label, inheritance)."""
    return [{"c": f"{name}_lock", "label": c_string(name), "inherit": inherit}
            for name, inherit in sorted(build.locks.items())]  # fmt: skip


def _rtos_notes(rtos: dict[str, Any] | None) -> list[str]:
    """What the receipt says about the RTOS choice (nothing for a super-loop)."""
    if rtos is None:
        return []
    return [
        f"RTOS: FreeRTOS through CMSIS-RTOS2, chosen because {rtos['reason']} runs as kernel threads",
        f"HAL time base: {rtos['timebase']['instance']} (FreeRTOS drives SysTick)",
        f"kernel heap: {rtos['heap_bytes']} bytes (heap_4 in {rtos['heap_region']})",
    ]


def _rtos_config(build: HalBuild, facts: HalRtos) -> dict[str, Any]:
    """``FreeRTOSConfig.h`` values from the facts: core clock, NVIC priority bits → the kernel and syscall
    interrupt priorities, and the heap the plan's threads and objects need (+25 %), checked against what the
    default RAM leaves after the plan's buffers and the main stack."""
    target = build.target
    if target.nvic is None:
        raise _unsupported(None, f"{target.id}: no NVIC facts (priority bits) for the FreeRTOS configuration")
    tcb = _TCB_BYTES + 2 * _HEAP_HEADER
    need = build.heap_bytes + _LOOP_STACK_BYTES + tcb  # the rac_loop thread
    need += _IDLE_STACK_WORDS * 4 + tcb + _TIMER_STACK_WORDS * 4 + tcb
    need += _QUEUE_BYTES + _TIMER_QUEUE_LENGTH * 16 + _HEAP_HEADER
    heap = math.ceil(need * 1.25 / 1024) * 1024
    region = default_ram(target)
    if region is None:
        raise _unsupported(None, f"{target.id}: no default RAM region for the kernel heap")
    buffers = sum(b["padded"] for b in build.buffers.values() if b["region"] == region.name)
    room = region.size - buffers - _RAM_RESERVE_BYTES
    if heap > room:
        raise _unsupported(
            None,
            f"the kernel heap needs {heap} bytes for the plan's threads and objects; "
            f"{region.name} leaves {room} bytes after {buffers} bytes of buffers and "
            f"{_RAM_RESERVE_BYTES} for the main stack: shrink thread stacks or queues",
        )
    cpu = target.clock("CPU")
    bits = target.nvic.priority_bits
    return {
        "cpu_hz": _hz(build.clocks, "CPU" if cpu is not None else "HCLK"),
        "prio_bits": bits,
        "lowest_priority": target.nvic.levels - 1,
        "max_syscall_priority": facts.max_syscall_priority,
        "heap_bytes": heap,
        "heap_region": region.name,
        "loop_stack": _LOOP_STACK_BYTES,
        "idle_stack_words": _IDLE_STACK_WORDS,
        "timer_stack_words": _TIMER_STACK_WORDS,
        "timer_queue_length": _TIMER_QUEUE_LENGTH,
    }


class HalLowerer:
    """The ``hal`` framework: STM32Cube HAL sources for targets whose chip facts name a HAL driver (``hal:``)."""

    name = "hal"

    def lower(self, bound: BoundPlan) -> Lowered:
        plan, target = bound.plan, bound.target
        hal = target.hal
        if hal is None:
            raise _unsupported(None, f"{target.id} has no STM32Cube HAL driver in its chip facts (hal:)")
        problems = unsupported_operations(bound)
        if problems:
            raise LoweringError(problems)
        build = HalBuild(bound, hal)
        reason = _rtos_reason(build)
        if reason is not None:
            if hal.rtos is None:
                raise _unsupported(None, f"{target.id}: the chip facts say how no RTOS runs beside the HAL (hal.rtos)")
            build.rtos = _rtos(build, hal.rtos, reason)
        for index, op in enumerate(plan.operations):
            build.views.append(_view(build, index, op))
        # A publisher's callback (or loop step) calls each attached reaction's <sym>_react() where its event
        # happens (templates/hal/events.c.j2); the publishers' views only learn the names.
        for index, op in enumerate(plan.operations):
            build.views[index]["reactions"] = [build.views[i]["sym"] for i, _ in reactions_to(plan, op.name)]
        realize_sections(build, self.name)
        # The console protocol (rac: boot / <op> ok / done) goes out on the board's console UART: claimed like
        # any UART, so an operation on the console shares its handle and init.
        console = build.uart(target.board.console.uart, None, "target.board.console") if target.board.console else None
        if build.rtos is not None and hal.rtos is not None:
            build.rtos.update(_rtos_config(build, hal.rtos))
        prefix = hal.family.lower() + "xx"  # stm32f4xx / stm32h7xx
        cache = build.cache_on
        hse = target.clock("HSE")
        irq_names = sorted(
            {u["irq"]["name"] for u in build.uarts.values() if u["irq"]}
            | {t["irq"]["name"] for t in build.timers.values() if t["irq"]}
            | {d["irq"] for d in build.dmas}
            | set(build.exti)
            | ({build.rtos["timebase"]["irq"]} if build.rtos is not None else set())
            | {i["irq"][k] for i in build.i2cs.values() if i["irq"] for k in ("ev", "er")}
            | {h["irq"] for h in build.handlers}
        )
        context: dict[str, Any] = {
            "target": target, "family": hal.family, "hal": hal, "prefix": prefix, "version": hal.release,
            "dmamux": bool(target.dmamux), "views": build.views, "clocks": _clocks(target, hal, build.clocks),
            "modules": sorted(build.modules),
            "ports": sorted(build.ports), "outputs": [build.outputs[k] for k in sorted(build.outputs)],
            "exti": sorted(build.exti.items()), "uarts": [build.uarts[k] for k in sorted(build.uarts)],
            "timers": [build.timers[k] for k in sorted(build.timers)],
            "adcs": [build.adcs[k] for k in sorted(build.adcs)],
            "i2cs": [build.i2cs[k] for k in sorted(build.i2cs)], "spis": [build.spis[k] for k in sorted(build.spis)],
            "dmas": build.dmas, "buffers": [build.buffers[k] for k in sorted(build.buffers)],
            "watchdog": build.watchdog, "dcache": cache,
            "dma_controllers": sorted({d["controller"] for d in build.dmas}),
            "console": console, "boot": c_string(target.id), "report_bytes": _report_bytes(build),
            "irq_names": irq_names, "lsi_hz": _hz(build.clocks, "LSI"),
            "uart_tx_timeout_ms": _uart_tx_timeout_ms(build) if build.uarts else None,
            "loop_ticks": any(v["ticks"] for v in build.views),
            # HSE_VALUE matters only when the HSE is used; otherwise the board's crystal, else ST's default.
            "hse_default": max(hse.default_hz.values(), default=25_000_000) if hse else 25_000_000,
            "rtos": build.rtos, "threads": build.threads, "locks": _lock_views(build),
            "handlers": build.handlers, "soft_irqs": build.soft_irqs,
            "behaviour": build.behaviour, "ready_ms": build.ready_ms() if build.behaviour else None,
            "noinit": build.noinit,
        }  # fmt: skip
        env = template_env("hal")
        context["macros"] = op_macros(env, self.name, {v["kind"]: _template(v["kind"]) for v in build.views}, context)
        files = with_contributed({
            "Core/Inc/main.h": env.get_template("main.h.j2").render(context),
            f"Core/Inc/{prefix}_hal_conf.h": env.get_template("hal_conf.h.j2").render(context),
            f"Core/Inc/{prefix}_it.h": env.get_template("it.h.j2").render(context),
            "Core/Src/main.c": env.get_template("main.c.j2").render(context),
            f"Core/Src/{prefix}_hal_msp.c": env.get_template("hal_msp.c.j2").render(context),
            f"Core/Src/{prefix}_it.c": env.get_template("it.c.j2").render(context),
            "README.md": env.get_template("README.md.j2").render(context),
        }, build.files)  # fmt: skip
        if build.rtos is not None:
            files["Core/Inc/FreeRTOSConfig.h"] = env.get_template("rtos_config.h.j2").render(context)
            files[f"Core/Src/{prefix}_hal_timebase_tim.c"] = env.get_template("rtos_timebase.c.j2").render(context)
        receipt = Receipt(
            realized=[f"{v['kind']}:{v['sym']}" for v in build.views],
            notes=[
                *(f"{signal} on {pin} (chosen: the plan named no pin)" for signal, pin in sorted(build.chosen.items())),
                hal.release,
                f"SYSCLK {context['clocks']['sysclk']} Hz",
                f"D-cache maintenance: {'yes' if cache else 'no'}",
                *_rtos_notes(build.rtos),
                *build.notes,
            ],  # fmt: skip
        )
        user = usercode.placement("Core/Src", "Core/Inc")
        return Lowered(framework=self.name, target=target.id, files=files, receipt=receipt, user_files=user)


register_framework("hal", HalLowerer())
