"""Lowering to ESP-IDF v5 (ESP32-S3): a CMake project with FreeRTOS tasks and the new driver APIs.

The plan is turned into *views*: one dict per operation holding everything the C templates need, with
every number (GPIO, ADC unit/channel, LEDC resolution, gptimer alarm count, queue depth) derived here
from the plan and the target facts. Templates only arrange C; they never compute. Shared peripherals
(a UART port, an I2C or SPI bus, an ADC unit) are collected once so two operations on the same bus
install its driver once. Plan text reaches C only through the escaping layer (``plan.escape``).

Realization choices (documented in the generated README too):
- ``source: kernel`` timers are ``esp_timer`` with ISR dispatch and TIMG instances are ``gptimer``s, so
  either callback runs in ISR context as the plan's ISR operations assume; the ISR hands events to
  threads with ``*FromISR`` calls;
- threads become FreeRTOS tasks, one per (operation, thread) role, with the thread's priority and stack;
- the watchdog is the Task Watchdog (TWDT) reconfigured to ``timeout_ms`` with panic-on-timeout, which ends
  in a full chip reset through the panic handler;
- DMA buffers come from ``heap_caps_malloc(..., MALLOC_CAP_DMA | MALLOC_CAP_INTERNAL)``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from rac_fw.contract import Evidence, Receipt
from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.bind import BoundBuild, BoundPlan, UnboundName
from rac_fw.domains.firmware.facts.query import free_pins
from rac_fw.domains.firmware.facts.sdk import default_version
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
from rac_fw.domains.firmware.lower.espidf_pytest import expectations
from rac_fw.domains.firmware.plan.behaviour.lowering import hook_calls, program, used_ops
from rac_fw.domains.firmware.plan.escape import c_string, kconfig_string
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag
from rac_fw.domains.firmware.verify.console import operation_label

#: ESP-IDF release the templates are written for (``facts/sdk.yaml``; also in templates/espidf/VERSION).
IDF_VERSION = "v" + (default_version("espidf") or "")

#: The ``idf_component_register`` REQUIRES each family needs (ESP-IDF 5.3+ split driver components).
REQUIRES = {
    "gpio": {"esp_driver_gpio"},
    "uart": {"esp_driver_uart"},
    "bus": {"esp_driver_i2c", "esp_driver_spi"},
    "adc": {"esp_adc"},
    "pwm": {"esp_driver_ledc"},
    "timer": {"esp_driver_gptimer", "esp_timer"},
    "watchdog": {"esp_system"},
    "dma": {"esp_hw_support"},
    "handoff": set(),
    "threads": set(),
    "log": set(),
}

#: The CMake project name (``project(rac_fw_app)``), which names the app's pytest file too.
PROJECT = "rac_fw_app"

#: Default stack/priority of tasks that serve an operation without a named plan thread.
DEFAULT_STACK_BYTES = 4096
DEFAULT_PRIORITY = 5
#: FreeRTOS priorities usable by application tasks (configMAX_PRIORITIES is 25 in ESP-IDF).
MAX_TASK_PRIORITY = 24
#: How long app_main waits for a quiet operation's first report (at set-up, or its task's first run) when its
#: view states no longer bound (a bus transfer's attempts and timeouts).
REPORT_WITHIN_MS = 1000
#: The UART driver's RX ring must be larger than the hardware FIFO (SOC_UART_FIFO_LEN = 128 on S3).
UART_MIN_RING = 256

_ADC = re.compile(r"^ADC(\d)_CH(\d+)$")
_GPIO = re.compile(r"^GPIO(\d+)$")
_PORT = re.compile(r"(\d+)$")


def _unsupported(where: str | None, message: str) -> LoweringError:
    """The plan is valid but this lowering cannot realize it here: located E_TARGET_UNSUPPORTED evidence."""
    return LoweringError([Evidence(code="E_TARGET_UNSUPPORTED", message=message, location=where)])


@dataclass
class EspIdfBuild(BoundBuild):
    """What lowering one plan accumulates: per-op views plus the shared peripherals and config."""

    bound: BoundPlan
    views: list[dict[str, Any]] = field(default_factory=list)
    requires: set[str] = field(default_factory=lambda: {"freertos", "log", "esp_driver_gpio"})
    sdkconfig: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    """Whole files an operation or plan block contributes (``partitions.csv``)."""
    uarts: dict[int, dict[str, Any]] = field(default_factory=dict)
    i2c_buses: dict[int, dict[str, Any]] = field(default_factory=dict)
    spi_buses: dict[str, dict[str, Any]] = field(default_factory=dict)
    adc_units: dict[int, dict[str, Any]] = field(default_factory=dict)
    ledc_timers: dict[tuple[int, int], int] = field(default_factory=dict)
    locks: dict[str, bool] = field(default_factory=dict)
    gpio_isr_flags: str | None = None
    chosen: dict[str, str] = field(default_factory=dict)
    """Signal → pin picked by the lowering because the plan named none (reported in the receipt)."""
    behaviour: dict[str, Any] | None = None
    """What main.c hosts of the plan's behaviour (``plan/sections/behaviour.py``): its C and its persisted
    variables; None without a behaviour."""

    # --- name resolution -------------------------------------------------------------------------
    def symbol(self, index: int, op: Any) -> str:
        """The C prefix for an operation: its plan name, else ``<op>_<index>`` (both identifiers)."""
        return op.name or f"{op.op}_{index}"

    def gpio(self, pin: str, where: str) -> int:
        match = _GPIO.match(pin)
        if match is None or pin not in self.target.pins:
            raise _unsupported(where, f"{pin!r} is not a GPIO of {self.target.id}")
        return int(match.group(1))

    def io(self, name: str, kind: str, where: str) -> tuple[int, bool]:
        """A board LED/button (by name or devicetree label) or a plan pin → (GPIO number, active_low)."""
        try:
            endpoint = self.bound.endpoint("led" if kind == "led" else "button", name)
        except UnboundName:
            raise _unsupported(where, f"{name!r} is neither a board {kind} nor a resources.pins entry") from None
        return self.gpio(endpoint.pin, where), endpoint.active_low

    def signal_pin(self, signal: str, where: str) -> int:
        """GPIO of the plan pin declared with ``signal`` (e.g. ``I2C0_SDA``); else the first free pin the
        GPIO matrix can route it to (``facts.query.free_pins``, avoiding ``BoundPlan.pins_in_use``), noted in
        the receipt."""
        use = next((p for p in self.plan.resources.pins if p.function == signal), None)
        if use is not None:
            return self.gpio(use.pin, f"resources.pins.{use.name}")
        if signal in self.chosen:
            return self.gpio(self.chosen[signal], where)
        taken = set(self.bound.pins_in_use) | set(self.chosen.values())
        free = free_pins(self.target, taken, signal)
        if not free:
            raise _unsupported(where, f"no free pin can carry {signal}; declare one in resources.pins")
        self.chosen[signal] = free[0].name
        return self.gpio(free[0].name, where)

    # --- what op specs' ESP-IDF view functions call -------------------------------------------------
    def uart(self, instance: str | None, baud: int | None, where: str, rx_ring: int = 0) -> dict[str, Any]:
        return _uart(self, instance, baud, where, rx_ring)

    def adc_channel(self, channel: Any, where: str) -> dict[str, Any]:
        return _adc_channel(self, channel, where)

    def adc_bitwidth(self, bits: int) -> str:
        return _adc_bitwidth(self, bits)

    def ledc(self, period_us: int, where: str) -> dict[str, Any]:
        return _ledc(self, period_us, where)

    def buffer(self, name: str, where: str) -> dict[str, Any]:
        return _buffer(self, name, where)

    def intr_flags(self, priority: int | None) -> str:
        return _intr_flags(self, priority)

    @staticmethod
    def port(instance: str, where: str) -> int:
        return _port(instance, where)

    @staticmethod
    def unsupported(where: str | None, message: str) -> LoweringError:
        return _unsupported(where, message)

    # --- what a behaviour asks of the operations (``plan/behaviour/lowering.py``) ---------------------
    def hooks(self, index: int, event: str) -> list[str]:
        """The behaviour hooks operation ``index``'s template calls where ``event`` happens (none, or one)."""
        return hook_calls(self.plan, self.target, "espidf", index, event)

    def behaviour_uses(self, index: int) -> bool:
        """Whether the plan's behaviour reads an output of, or acts on, operation ``index`` (its template then
        renders the helpers its ``act_<action>`` macros call)."""
        found = program(self.plan, self.target, "espidf") if self.plan.behaviour is not None else None
        return found is not None and index in used_ops(found)

    def op_module(self, index: int) -> Any:
        """The Jinja module of operation ``index``'s template (its ``act_<action>`` macros take the view)."""
        return template_env("espidf").get_template(f"{self.views[index]['family']}.c.j2").module

    def thread(self, name: str | None, role: str) -> dict[str, Any]:
        """Task parameters for a role played by plan thread ``name`` (defaults when None)."""
        thread = self.plan.thread(name) if name else None
        stack = max(thread.stack_bytes, 2048) if thread else DEFAULT_STACK_BYTES
        priority = min(max(thread.priority, 1), MAX_TASK_PRIORITY) if thread else DEFAULT_PRIORITY
        return {"task": f"{role}_task", "name": c_string(role[:15]), "stack": stack, "priority": priority}


def _port(instance: str, where: str) -> int:
    match = _PORT.search(instance)
    if match is None:
        raise _unsupported(where, f"cannot derive a port number from {instance!r}")
    return int(match.group(1))


def _intr_flags(build: EspIdfBuild, priority: int | None) -> str:
    """``esp_intr_alloc`` flags for an ISR priority (levels 1..rtos_safe_max_level), else default 0."""
    interrupts = build.target.interrupts
    top = interrupts.rtos_safe_max_level if interrupts is not None and interrupts.rtos_safe_max_level else 3
    return f"ESP_INTR_FLAG_LEVEL{priority}" if priority is not None and 1 <= priority <= top else "0"


# --- per-family view builders ---------------------------------------------------------------------
def _uart(build: EspIdfBuild, instance: str | None, baud: int | None, where: str, rx_ring: int = 0) -> dict[str, Any]:
    console = build.target.board.console
    name = instance or (console.uart if console else "UART0")
    port = _port(name, where)
    entry = build.uarts.setdefault(
        port, {"port": port, "baud": baud or (console.baud if console else 115200), "rx_ring": UART_MIN_RING,
               "console": console is not None and name == console.uart, "tx": -1, "rx": -1}
    )  # fmt: skip
    entry["rx_ring"] = max(entry["rx_ring"], rx_ring)
    # The console is already driven by the VFS for printf; a driver is installed only to receive on it.
    entry["install"] = entry.get("install", False) or not entry["console"] or rx_ring > 0
    if baud:
        entry["baud"] = baud
    if not entry["console"]:
        for key in ("tx", "rx"):
            entry[key] = build.signal_pin(f"{name}_{key.upper()}", where)
    return entry


def _adc_channel(build: EspIdfBuild, channel: Any, where: str) -> dict[str, Any]:
    pin = getattr(channel, "pin", None)
    if pin is None:
        raise _unsupported(where, "ESP-IDF needs the analog input pin of the channel")
    facts = build.target.pins.get(pin)
    signal = next((a for a in (facts.analog if facts else ()) if _ADC.match(a)), None)
    if signal is None:
        raise _unsupported(where, f"{pin} is not an ADC input of {build.target.id}")
    match = _ADC.match(signal)
    assert match is not None
    unit = int(match.group(1))
    build.adc_units.setdefault(unit, {"unit": unit})
    return {"unit": unit, "channel": int(match.group(2)), "pin": pin, "signal": signal}


def _adc_bitwidth(build: EspIdfBuild, bits: int) -> str:
    supported = build.target.adc.resolution_bits if build.target.adc is not None else (12,)
    return f"ADC_BITWIDTH_{bits}" if bits in supported else "ADC_BITWIDTH_DEFAULT"


def _ledc(build: EspIdfBuild, period_us: int, where: str) -> dict[str, Any]:
    """LEDC timer + resolution: the widest duty resolution with freq · 2^bits ≤ the LEDC clock."""
    units = build.target.pwm.units.values() if build.target.pwm is not None else ()
    facts = next((u for u in units if u.max_resolution_bits is not None), None)
    if facts is None or facts.max_resolution_bits is None:
        raise _unsupported(where, f"{build.target.id} facts have no LEDC entry (pwm.units)")
    source_hz = int(facts.clock_hz or build.clocks.hz(facts.clock) or 0)
    freq_hz = max(1, round(1_000_000 / period_us))
    bits = min(facts.max_resolution_bits, int(math.floor(math.log2(source_hz / freq_hz))))
    if bits < 1:
        raise _unsupported(where, f"{freq_hz} Hz is above what the {source_hz} Hz LEDC clock can divide")
    key = (freq_hz, bits)
    if key not in build.ledc_timers:
        if len(build.ledc_timers) >= (facts.timers or 4):
            raise _unsupported(where, "more distinct PWM frequencies than LEDC timers")
        build.ledc_timers[key] = len(build.ledc_timers)
    channel = sum(1 for v in build.views if v["family"] == "pwm")
    return {"freq_hz": freq_hz, "bits": bits, "max_duty": (1 << bits), "timer": build.ledc_timers[key],
            "channel": channel, "source_hz": source_hz}  # fmt: skip


def _buffer(build: EspIdfBuild, name: str, where: str) -> dict[str, Any]:
    buffer = build.plan.buffer(name)
    if buffer is None:
        raise _unsupported(where, f"unknown buffer {name!r}")
    return {"name": buffer.name, "size": buffer.size_bytes, "dma": buffer.role != "scratch",
            "element": buffer.element_bytes}  # fmt: skip


def _template(kind: str) -> str:
    """The template file (``templates/espidf/<family>.c.j2``) whose macro renders operation ``kind``."""
    realization = spec(kind).realization("espidf")
    return realization.template if realization is not None else ""


def _view(build: EspIdfBuild, index: int, op: Any) -> dict[str, Any]:
    """The template view of one operation: the common names plus what its op spec's view derives."""
    sym = build.symbol(index, op)
    view: dict[str, Any] = {"op": op, "sym": sym, "family": _template(op.op), "index": index,
                            "label": c_string(sym),
                            "tag": c_string(operation_label(index, op.op, op.name))}  # fmt: skip
    realization = spec(op.op).realization("espidf")
    if realization is None or realization.view is None:
        raise LookupError(f"{op.op} has no ESP-IDF view in its op spec")
    view["behaviour"] = build.behaviour_uses(index)
    view.update(realization.view(build, index, op))
    view["value"] = spec(op.op).produces_value(op)
    quiet = realization.quiet(op) if callable(realization.quiet) else realization.quiet
    # With a behaviour, app_main waits for a quiet operation's report before the next set-up (plan order).
    view["await"] = build.plan.behaviour is not None and quiet
    view.setdefault("report_within_ms", REPORT_WITHIN_MS)
    return view


#: The pytest-embedded test of the app (``pytest_<app>.py``, as Espressif's examples name theirs).
PYTEST_FILE = f"pytest_{PROJECT}.py"


def _pytest_view(build: EspIdfBuild) -> dict[str, Any]:
    """What the app's pytest-embedded test expects, as Python literals: the lines ``main.c`` prints
    (``rac: boot <target>``, ``rac: <label> ok`` per operation, ``rac: done``; printf's ``\\n`` may reach
    the console as ``\\r\\n``); with a behaviour, its predicted console in order (``espidf_pytest``)."""
    labels = tuple(operation_label(i, op.op, op.name) for i, op in enumerate(build.plan.operations))
    found = expectations(build.plan, build.target)
    persists = build.behaviour is not None and bool(build.behaviour["persisted"])
    return {
        "predicted": None if found is None else {"lines": [repr(line) for line in found[0]], "timeout_s": found[1],
                                                 "persists": persists},
        "target": build.target,
        "filename": PYTEST_FILE,
        "name": PROJECT,
        "boot": repr(rf"rac: boot {re.escape(build.target.id)}\r?\n"),
        "ok": repr(r"rac: (\S+) ok\r?\n"),
        "done": repr(r"rac: done\r?\n"),
        "operations": repr(labels),
    }


def _sdkconfig(build: EspIdfBuild) -> dict[str, str]:
    """The complete set of options the project depends on (sdkconfig.defaults is regenerated whole)."""
    target = build.target.board.idf_target or build.target.id
    cpu_hz = build.clocks.hz("CPU") or 160_000_000
    options = {
        "CONFIG_IDF_TARGET": kconfig_string(target),
        f"CONFIG_ESP_DEFAULT_CPU_FREQ_MHZ_{cpu_hz // 1_000_000}": "y",
        # 1 kHz tick: pdMS_TO_TICKS() is exact for every millisecond period in the plan.
        "CONFIG_FREERTOS_HZ": "1000",
        "CONFIG_ESP_CONSOLE_UART_DEFAULT": "y",
        "CONFIG_ESP_CONSOLE_UART_BAUDRATE": str(
            build.target.board.console.baud if build.target.board.console else 115200
        ),
        "CONFIG_LOG_DEFAULT_LEVEL_INFO": "y",
        "CONFIG_COMPILER_OPTIMIZATION_SIZE": "y",
        "CONFIG_ESP_MAIN_TASK_STACK_SIZE": str(max(build.plan.stack_bytes, 3584)),
        # Keep the TWDT watching the idle tasks but without a panic unless the plan asks for one.
        "CONFIG_ESP_TASK_WDT_EN": "y",
        "CONFIG_ESP_TASK_WDT_INIT": "y",
        "CONFIG_ESP_TASK_WDT_TIMEOUT_S": "5",
    }
    if any(v["family"] == "timer" for v in build.views):
        # components/esp_driver_gptimer/Kconfig (v5.5; IRAM_SAFE before, kept only in its sdkconfig.rename).
        options["CONFIG_GPTIMER_ISR_CACHE_SAFE"] = "y"
    if build.gpio_isr_flags is not None or any(v["family"] == "timer" for v in build.views):
        # ISR handlers live in IRAM (IRAM_ATTR) and use FreeRTOS *FromISR calls, which must stay in IRAM too.
        options["CONFIG_FREERTOS_PLACE_FUNCTIONS_INTO_FLASH"] = "n"
    module = build.target.board.module
    flash_bytes = module.flash_bytes if module is not None else None
    if flash_bytes:
        # The module's flash size, so the partition table and esptool use all of it.
        options[f"CONFIG_ESPTOOLPY_FLASHSIZE_{int(flash_bytes) >> 20}MB"] = "y"
    options.update(build.sdkconfig)
    return dict(sorted(options.items()))


class EspIdfLowerer:
    """The ``espidf`` framework: ESP-IDF v5 CMake project for chips whose board names an IDF target."""

    name = "espidf"

    def lower(self, bound: BoundPlan) -> Lowered:
        plan, target = bound.plan, bound.target
        problems = unsupported_operations(bound)
        if problems or target.board.idf_target is None:
            missing = Evidence(code="E_TARGET_UNSUPPORTED", message=f"{target.id} names no ESP-IDF target")
            raise LoweringError(problems or [missing])
        build = EspIdfBuild(bound)
        for index, op in enumerate(plan.operations):
            build.views.append(_view(build, index, op))
        realize_sections(build, self.name)
        for view in build.views:
            view["handoffs"] = [
                h for h in build.views if spec(h["op"].op).has(Flag.HANDOFF) and h["op"].source == view["op"].name
            ]
            build.requires |= REQUIRES.get(view["family"], set())
        if plan.resources.buffers:
            build.requires.add("heap")
        env = template_env("espidf")
        macros = op_macros(env, self.name, {v["op"].op: v["family"] for v in build.views})
        buffers = [
            {"name": b.name, "size": b.size_bytes, "dma": b.role != "scratch", "label": c_string(b.name)}
            for b in plan.resources.buffers
        ]
        context = {
            "target": target,
            "idf_version": IDF_VERSION,
            "views": build.views,
            "macros": macros,
            "uarts": [build.uarts[k] for k in sorted(build.uarts)],
            "i2c_buses": [build.i2c_buses[k] for k in sorted(build.i2c_buses)],
            "spi_buses": [build.spi_buses[k] for k in sorted(build.spi_buses)],
            "adc_units": [build.adc_units[k] for k in sorted(build.adc_units)],
            "ledc_timers": sorted(
                ({"freq_hz": f, "bits": b, "timer": t} for (f, b), t in build.ledc_timers.items()),
                key=lambda t: t["timer"],
            ),  # fmt: skip
            "locks": sorted(build.locks.items()),
            "gpio_isr_flags": build.gpio_isr_flags,
            "buffers": buffers,
            "requires": sorted(build.requires),
            "sdkconfig": _sdkconfig(build),
            "project": c_string(PROJECT),
            "boot": c_string(target.id),
            "behaviour": build.behaviour,
        }
        project = {
            path: env.get_template(f"{path}.j2").render(context)
            for path in ("CMakeLists.txt", "main/CMakeLists.txt", "main/main.c", "sdkconfig.defaults", "README.md")
        }
        project[PYTEST_FILE] = env.get_template("pytest_app.py.j2").render(_pytest_view(build))
        files = with_contributed(project, build.files)
        receipt = Receipt(
            realized=[f"{v['op'].op}:{v['sym']}" for v in build.views],
            notes=[
                *(f"{signal} on {pin} (chosen: the plan named no pin)" for signal, pin in sorted(build.chosen.items())),
                f"ESP-IDF {IDF_VERSION}",
                f"target {target.board.idf_target}",
            ],
        )
        return Lowered(
            framework=self.name, target=target.id, files=files, receipt=receipt, user_files=usercode.placement("main")
        )


register_framework("espidf", EspIdfLowerer())
