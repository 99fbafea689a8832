"""The ``baremetal`` framework: register-level C for Cortex-M targets, with no RTOS and no vendor SDK.

The tree it emits is self-contained (``build.json`` tells the gcc builder how to compile it):

- ``include/device.h`` from the SVD facts, ``include/armv7m.h`` (architecture), ``include/rac.h``;
- ``src/startup.c`` (vector table from the SVD interrupts, reset handler, fault handlers),
  ``src/rt.c`` (console formatting, semihosting exit), ``src/main.c`` (the plan's operations);
- ``src/user.c`` / ``include/user.h``: the user's own code (``usercode``), compiled but never generated;
- ``link.ld`` from the memory facts and ``placement``.

Which register layout an operation is written for is asked of the facts (does the USART have ``SR``
and ``DR``, or ``ISR`` and ``TDR``? is the ADC an ``SAADC``?), never of the target id. Every value
programmed into a register comes from ``baremetal.derive`` over facts; plan strings reach C only
through ``c_string_literal``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rac_fw.contract import Evidence, Receipt, Relaxation
from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.bind import BoundBuild, BoundPlan
from rac_fw.domains.firmware.facts.chip import Watchdog
from rac_fw.domains.firmware.facts.load import interrupts, peripheral
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import adc_unit_of, software_irq, watchdog_instance
from rac_fw.domains.firmware.lower import (
    Lowered,
    LoweringError,
    realize_sections,
    register_framework,
    template_env,
    unsupported_operations,
    with_contributed,
)
from rac_fw.domains.firmware.lower.baremetal import derive
from rac_fw.domains.firmware.lower.baremetal.derive import DerivationError, PinRef
from rac_fw.domains.firmware.lower.baremetal.header import c_ident, device_header, layout_name
from rac_fw.domains.firmware.lower.baremetal.linker import DmaBufferLayout, linker_script
from rac_fw.domains.firmware.placement import buffer_controller, buffer_needs, default_ram, placement
from rac_fw.domains.firmware.plan.behaviour.lowering import hook_calls
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.verify.console import operation_label

FRAMEWORK = "baremetal"
#: The user's own code: ``src/user.c`` is compiled with the generated sources, ``include/user.h`` is on
#: the include path (``-Iinclude``).
USER_FILES = usercode.placement("src", "include")
#: How long the uart_rx_irq self-test listens for a line of input before moving on.
RX_WINDOW_MS = 1000
#: Longest a timer or blink self-test waits before the sequence moves on.
SELF_TEST_US = 2_000_000
#: Longest half period the blink self-test waits between its four toggles.
BLINK_TEST_HALF_MS = 100
#: Upper bound of any single peripheral wait that has no natural duration (DMA, ADC, enable acks).
PERIPHERAL_TIMEOUT_US = 100_000
_DIGITS = re.compile(r"(\d+)$")


class BaremetalError(DerivationError):
    """The plan asks for something the bare-metal lowering cannot derive from this target's facts.

    ``fix`` optionally names a field of the failing operation and the value that the lowering can
    realize; it becomes the evidence's relaxation (a patch at that operation's path).
    """

    def __init__(self, message: str, fix: tuple[str, Any] | None = None):
        super().__init__(message)
        self.fix = fix


# --- facts about register layouts ------------------------------------------------------------------


def _registers(target: Target, instance: str) -> dict[str, dict[str, tuple[int, int]]]:
    """Register → field → (lsb, width) for an instance's layout (flattened names as in device.h)."""
    return {
        c_ident(r.name): {f.name: (f.lsb, f.width) for f in r.fields} for r in peripheral(target.id, instance).registers
    }


@dataclass
class Regs:
    """An instance's register layout, with checked macro names for the templates."""

    target: Target
    instance: str
    layout: str = ""
    regs: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.instance not in self.target.peripherals:
            raise BaremetalError(f"{self.target.id} has no peripheral {self.instance} in its SVD facts")
        self.layout = layout_name(self.target, self.instance)
        self.regs = _registers(self.target, self.instance)

    def has(self, *names: str) -> bool:
        return all(n in self.regs for n in names)

    def field(self, reg: str, name: str) -> tuple[int, int]:
        try:
            return self.regs[reg][name]
        except KeyError:
            raise BaremetalError(f"{self.instance}: no field {reg}.{name} in the SVD facts") from None

    def m(self, reg: str, name: str) -> str:
        """The ``_Msk`` macro of a field (checked to exist, so the C compiles)."""
        self.field(reg, name)
        return f"{self.layout}_{reg}_{name}_Msk"

    def p(self, reg: str, name: str) -> str:
        self.field(reg, name)
        return f"{self.layout}_{reg}_{name}_Pos"


def _group(target: Target, instance: str) -> str:
    found = target.peripherals.get(instance)
    return found.group if found else ""


def _irq(target: Target, instance: str) -> tuple[int, str]:
    """(IRQ number, vector handler name) of an instance, from the SVD interrupt facts."""
    rows = interrupts(target.id)
    row = next((r for r in rows if r[1] == instance), None) or next((r for r in rows if instance in r[2]), None)
    if row is None:
        raise BaremetalError(f"{target.id}: {instance} has no interrupt in the SVD facts")
    return row[0], f"{c_ident(row[1])}_IRQHandler"


def _is_cortex_m(target: Target) -> bool:
    return target.core.arch.startswith("cortex-m") and target.svd_device is not None


# --- the lowerer -----------------------------------------------------------------------------------


@dataclass
class _Block:
    """One rendered template with its context: contributes to decls/tick/setup/after/loop."""

    template: str
    ctx: dict[str, Any]


@dataclass
class BaremetalBuild(BoundBuild):
    """Everything gathered while lowering one plan."""

    bound: BoundPlan
    core_hz: int
    blocks: list[_Block] = field(default_factory=list)
    drivers: dict[str, dict[str, Any]] = field(default_factory=dict)
    dma: list[DmaBufferLayout] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    claimed: dict[str, str] = field(default_factory=dict)
    """Peripheral instance → the operation label that owns it (one owner per hardware timer)."""
    files: dict[str, str] = field(default_factory=dict)
    """Whole files an operation or plan block contributes."""
    views: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Operation index → the context its template rendered with (a behaviour reads outputs and actions there)."""
    templates: dict[int, str] = field(default_factory=dict)
    """Operation index → its template (whose ``act_<action>`` macros a behaviour calls)."""
    behaviour: str | None = None
    """The behaviour's C (``behaviour.lowering``), placed in main.c after the operations' declarations."""
    noinit: bool = False
    """The behaviour persists values: the linker script keeps a retained ``.noinit`` section."""

    # --- what op specs' bare-metal view functions call --------------------------------------------
    def base(self, index: int, op: Any) -> dict[str, Any]:
        """The id and console label every operation block has."""
        return _base(self, index, op)

    def gpio_pin(self, name: str) -> dict[str, Any]:
        """A pin as a GPIO (port, number, clock gate or PSEL) for the family's GPIO template macros."""
        return _pin(self, name, "GPIO")

    def gpio_template(self) -> str:
        """The GPIO template (``ops/gpio_stm32.c.j2`` / ``ops/gpio_nrf.c.j2``) the facts' pin routing needs."""
        return _gpio_template(self.target)

    def emit(self, template: str, ctx: dict[str, Any]) -> None:
        """Add a rendered block (``templates/baremetal/<template>.c.j2``) with its context."""
        self.blocks.append(_Block(f"{template}.c.j2", ctx))

    #: Bounds of the self-test sequence, for the op specs' view functions.
    RX_WINDOW_MS = RX_WINDOW_MS
    SELF_TEST_US = SELF_TEST_US
    BLINK_TEST_HALF_MS = BLINK_TEST_HALF_MS
    PERIPHERAL_TIMEOUT_US = PERIPHERAL_TIMEOUT_US
    TRAILING_DIGITS = _DIGITS
    #: The register-value derivations (``lower/baremetal/derive.py``) the view functions compute with.
    derive = derive

    @staticmethod
    def error(message: str) -> BaremetalError:
        """A derivation failure (located and turned into E_TARGET_UNSUPPORTED evidence by the lowerer)."""
        return BaremetalError(message)

    def pin(self, name: str, signal: str) -> dict[str, Any]:
        return _pin(self, name, signal)

    def hooks(self, index: int, event: str) -> list[str]:
        """The behaviour hooks operation ``index``'s template calls where ``event`` happens."""
        return hook_calls(self.plan, self.target, FRAMEWORK, index, event)

    def op_module(self, index: int) -> Any:
        """The Jinja module of operation ``index``'s template, rendered with its context."""
        template = self.templates.get(index)
        if template is None:
            return None
        return template_env(FRAMEWORK).get_template(template).make_module({"c": self.views[index]})

    def regs(self, instance: str) -> Regs:
        return Regs(self.target, instance)

    def uart_of(self, instance: str | None, baud: int | None) -> dict[str, Any]:
        return _uart_of(self, instance, baud)

    def irq(self, instance: str) -> tuple[int, str]:
        return _irq(self.target, instance)

    def group(self, instance: str) -> str:
        return _group(self.target, instance)

    def adc_common(self, unit: str) -> str:
        return _adc_common(self.target, unit)

    @staticmethod
    def adc_unit_of(signal: str) -> str:
        return adc_unit_of(signal)

    @staticmethod
    def buffer_decl(layout: DmaBufferLayout) -> dict[str, str]:
        return _buffer_decl(layout)

    def watchdog_instance(self) -> tuple[str, Watchdog] | None:
        return watchdog_instance(self.target)

    def budget_us(self, timeout_us: int) -> int:
        return derive.poll_budget(self.core_hz, timeout_us)

    def priority(self, requested: int | None) -> int:
        bits = self.target.core.nvic_priority_bits or 3
        return requested if requested is not None else (1 << bits) // 2


class BaremetalLowerer:
    """Registered as framework ``baremetal`` for every Cortex-M target with SVD facts."""

    name = FRAMEWORK

    def lower(self, bound: BoundPlan) -> Lowered:
        plan, target = bound.plan, bound.target
        if not _is_cortex_m(target):
            raise BaremetalError(f"the baremetal framework needs a Cortex-M target with SVD facts, not {target.id}")
        core_hz = plan_clocks(plan, target, FRAMEWORK).core_hz()
        if core_hz is None:
            raise BaremetalError(f"{target.id}: no baremetal core clock in the facts")
        problems = unsupported_operations(bound)
        if problems:
            raise LoweringError(problems)
        build = BaremetalBuild(bound, core_hz)
        with _located("board.console", target):
            _console(build)
        with _located("resources.buffers", target):
            _dma_buffers(build)
        for index, op in enumerate(plan.operations):
            with _located(f"operations[{index}]", target, op.op):
                realization = spec(op.op).realization(FRAMEWORK)
                if realization is None or realization.view is None or not realizes(FRAMEWORK, op.op, target):
                    raise BaremetalError(f"{op.op} is not supported by baremetal on {target.id}")
                before = len(build.blocks)
                realization.view(build, index, op)
                for block in build.blocks[before:]:
                    if block.ctx.get("id") == f"op{index}":
                        build.views[index], build.templates[index] = block.ctx, block.template
        realize_sections(build, FRAMEWORK)
        return _assemble(build)


@contextmanager
def _located(location: str, target: Target, *objects: str) -> Iterator[None]:
    """Turn a derivation failure into the pipeline's ``LoweringError`` with located evidence."""
    try:
        yield
    except DerivationError as exc:
        relaxations = []
        fix = getattr(exc, "fix", None)
        path = re.fullmatch(r"operations\[(\d+)\]", location)
        if fix is not None and path is not None:
            field, value = fix
            relaxations.append(Relaxation(
                description=f"set {location}.{field} to {value}",
                patch=[{"op": "replace", "path": ["operations", int(path.group(1)), field], "value": value}],
            ))
        evidence = Evidence(
            code="E_TARGET_UNSUPPORTED",
            message=f"baremetal on {target.id}: {exc}",
            location=location,
            objects=[*objects, target.id],
            relaxations=relaxations,
        )
        raise LoweringError([evidence]) from exc


register_framework(FRAMEWORK, BaremetalLowerer())


# --- pins and UART drivers ---------------------------------------------------------------------------


def _pin(build: BaremetalBuild, name: str, signal: str) -> dict[str, Any]:
    target = build.target
    ref: PinRef = derive.pin_ref(name)
    facts = target.pins.get(name)
    if facts is None:
        raise BaremetalError(f"{target.id} has no pin {name}")
    info: dict[str, Any] = {"name": name, "port": ref.port, "number": ref.number, "signal": signal}
    if facts.routing == "af":
        info["gate"] = derive.clock_gate(target, ref.port)
        if signal not in ("GPIO", "ANALOG"):
            af = facts.af(signal)
            if af is None:
                raise BaremetalError(f"{name} cannot carry {signal} (no alternate function in the pin facts)")
            info["af"] = af
    else:
        info["psel"] = ref.port_index << 5 | ref.number
    return info


def _gpio_template(target: Target) -> str:
    return "ops/gpio_stm32.c.j2" if "RCC" in target.peripherals else "ops/gpio_nrf.c.j2"


def _uart_driver(build: BaremetalBuild, instance: str, baud: int | None, console: bool) -> dict[str, Any]:
    """The driver context for one UART instance (created once; the console is created first)."""
    if instance in build.drivers:
        return build.drivers[instance]
    target = build.target
    board_console = target.board.console
    tx: str | None
    rx: str | None
    if console and board_console is not None:
        tx, rx = board_console.tx, board_console.rx
        rate = baud or board_console.baud
    else:
        tx = _plan_pin(build, f"{instance}_TX")
        rx = _plan_pin(build, f"{instance}_RX", required=False)
        rate = baud or (board_console.baud if board_console else 115200)
    regs = Regs(target, instance)
    fn = "rac_console" if console else f"uart_{instance.lower()}"
    ctx: dict[str, Any] = {
        "inst": instance,
        "fn": fn,
        "m": regs.m,
        "gpio_template": _gpio_template(target),
        "putc": f"{fn}_putc",
        "init": None if console else f"{fn}_init",
        "putc_sig": f"void {fn}_putc(char ch)" if console else f"static void {fn}_putc(char ch)",
        "init_sig": f"void {fn}_init(void)" if console else f"static void {fn}_init(void)",
        "tx_pin": _pin(build, str(tx), f"{instance}_TX"),
        "rx_pin": _pin(build, rx, f"{instance}_RX") if rx else None,
        "char_budget": build.budget_us(2 * 10_000_000 // rate + 100),
        "rate": rate,
    }
    if _group(target, instance) == "UARTE":
        ctx.update(template="ops/uart_uarte.c.j2", layout="uarte", baud=derive.uarte_baudrate(target, rate))
    elif regs.has("SR", "DR", "BRR"):
        hz = derive.uart_kernel_hz(build.clocks, instance)
        ctx.update(
            template="ops/uart_usart.c.j2",
            layout="sr",
            status="SR",
            tx="DR",
            rx="DR",
            gate=derive.clock_gate(target, instance),
            kernel_hz=hz,
            baud=derive.usart_brr(hz, rate),
            clock=derive.uart_kernel_clock(target, instance),
        )
    elif regs.has("ISR", "TDR", "RDR", "BRR"):
        hz = derive.uart_kernel_hz(build.clocks, instance)
        ctx.update(
            template="ops/uart_usart.c.j2",
            layout="isr",
            status="ISR",
            tx="TDR",
            rx="RDR",
            gate=derive.clock_gate(target, instance),
            kernel_hz=hz,
            baud=derive.usart_brr(hz, rate),
            clock=derive.uart_kernel_clock(target, instance),
        )
    else:
        raise BaremetalError(f"{instance}: no UART register layout the baremetal templates know")
    build.drivers[instance] = ctx
    build.blocks.append(_Block(ctx["template"], ctx))
    return ctx


def _plan_pin(build: BaremetalBuild, signal: str, required: bool = True) -> str | None:
    use = next((p for p in build.plan.resources.pins if p.function == signal), None)
    if use is None and required:
        raise BaremetalError(f"{signal} needs a pin in resources.pins (function {signal})")
    return use.pin if use else None


def _console(build: BaremetalBuild) -> None:
    console = build.target.board.console
    if console is None:
        raise BaremetalError(f"{build.target.id} has no board console UART in its facts")
    _uart_driver(build, console.uart, None, console=True)


def _uart_of(build: BaremetalBuild, instance: str | None, baud: int | None) -> dict[str, Any]:
    console = build.target.board.console
    name = instance or (console.uart if console else "")
    is_console = console is not None and name == console.uart
    if console is not None and is_console and baud is not None and baud != console.baud:
        raise BaremetalError(
            f"the console {name} runs at {console.baud} baud; print elsewhere for {baud}", fix=("baud", console.baud)
        )
    return _uart_driver(build, name, baud, console=is_console)


def _base(build: BaremetalBuild, index: int, op: Any) -> dict[str, Any]:
    label = operation_label(index, op.op, op.name)
    return {"id": f"op{index}", "label": label, "label_literal": c_string_literal(label)}


# --- operations ----------------------------------------------------------------------------------------












def _adc_common(target: Target, unit: str) -> str:
    commons = sorted(n for n in target.peripherals if "Common" in n)
    digit = unit[-1]
    matching = [n for n in commons if digit in n.replace("_Common", "")]
    chosen = matching or commons
    if not chosen:
        raise BaremetalError(f"{target.id}: no ADC common block in the SVD facts")
    return chosen[0]


def _dma_buffers(build: BaremetalBuild) -> None:
    """Lay out every DMA buffer of the plan where ``placement`` put it."""
    plan, target = build.plan, build.target
    regions = placement(plan, target)
    dcache = target.core.dcache
    for buffer in plan.resources.buffers:
        if buffer.role == "scratch":
            continue
        controller = buffer_controller(plan, target, buffer.name)
        needs = buffer_needs(plan, target, FRAMEWORK, buffer.name)
        if controller is None:
            build.notes.append(f"buffer {buffer.name} is used by no DMA operation: not emitted")
            continue
        if needs is None or buffer.name not in regions:
            raise BaremetalError(f"buffer {buffer.name}: no region for it in the facts")
        size = buffer.size_bytes
        if dcache is not None:
            size = -(-size // dcache.line_bytes) * dcache.line_bytes
        build.dma.append(
            DmaBufferLayout(buffer.name, controller.name, regions[buffer.name], size, needs.alignment_bytes)
        )


def _buffer_decl(layout: DmaBufferLayout) -> dict[str, str]:
    decl = f"static volatile uint8_t {layout.symbol}[{layout.size}]; /* {layout.region}, {layout.align}-byte aligned */"
    return {"symbol": layout.symbol, "decl": decl}






# --- assembling the tree ---------------------------------------------------------------------------------


def _vectors(target: Target) -> tuple[list[str | None], list[str]]:
    """Vector table entries after the initial SP, and the handlers to declare weak."""
    system: list[str | None] = [
        "Reset_Handler", "NMI_Handler", "HardFault_Handler", "MemManage_Handler", "BusFault_Handler",
        "UsageFault_Handler", None, None, None, None, "SVC_Handler", "DebugMon_Handler", None,
        "PendSV_Handler", "SysTick_Handler",
    ]  # fmt: skip
    device: list[str | None] = [None] * target.irq_count
    for number, name, _ in interrupts(target.id):
        device[number] = f"{c_ident(name)}_IRQHandler"
    soft = software_irq(target)
    if soft is not None and soft.line < len(device):
        device[soft.line] = soft.handler
    entries = system + device
    strong = {"Reset_Handler", "HardFault_Handler"}
    weak = [name for name in entries if name and name not in strong]
    return entries, list(dict.fromkeys(weak))


def build_config(target: Target) -> dict[str, Any]:
    """``build.json``: what the gcc builder compiles and links, derived from the core facts."""
    core = target.core
    cpu = [f"-mcpu={core.arch}", "-mthumb"]
    cpu += [f"-mfpu={core.fpu}", "-mfloat-abi=hard"] if core.fpu else ["-mfloat-abi=soft"]
    return {
        "format": 1,
        "target": target.id,
        "sources": ["src/startup.c", "src/rt.c", "src/main.c", f"src/{usercode.SOURCE}"],
        "cflags": cpu + [
            "-std=gnu11", "-Os", "-g", "-Wall", "-Wextra", "-Werror", "-ffreestanding", "-fno-common",
            "-ffunction-sections", "-fdata-sections", "-fno-tree-loop-distribute-patterns", "-Iinclude",
        ],
        "ldflags": cpu + [
            "-nostdlib", "-Wl,--gc-sections", "-Wl,--orphan-handling=error", "-Wl,--no-warn-rwx-segments",
        ],
        "libs": ["-lgcc"],
        "linker_script": "link.ld",
        "image": "firmware.elf",
    }  # fmt: skip


def _render_block(block: _Block) -> dict[str, str]:
    env = template_env(FRAMEWORK)
    module = env.get_template(block.template).make_module({"c": block.ctx})
    parts: dict[str, str] = {}
    for part in ("decls", "tick", "setup", "after", "loop"):
        macro = getattr(module, part, None)
        if macro is not None:
            text = str(macro(block.ctx)).strip("\n")
            if text.strip():
                parts[part] = text
    return parts


def _assemble(build: BaremetalBuild) -> Lowered:
    target, plan = build.target, build.plan
    env = template_env(FRAMEWORK)
    rendered = [_render_block(b) for b in build.blocks]
    collect: dict[str, list[str]] = {
        k: [r[k] for r in rendered if k in r] for k in ("decls", "tick", "setup", "after", "loop")
    }
    vectors, weak = _vectors(target)
    ram = default_ram(target)
    files = {
        "include/armv7m.h": env.get_template("armv7m.h").render(),
        "include/device.h": device_header(target),
        "include/rac.h": env.get_template("rac.h.j2").render(
            target=target, core_hz=build.core_hz, prio_bits=target.core.nvic_priority_bits or 3
        ),
        "src/rt.c": env.get_template("rt.c.j2").render(),
        "src/startup.c": env.get_template("startup.c.j2").render(
            target=target,
            vectors=vectors,
            vector_count=len(vectors) + 1,
            weak_handlers=weak,
            fpu=target.core.fpu is not None,
            zero_sections=sorted({b.region for b in build.dma}),
        ),
        "src/main.c": env.get_template("main.c.j2").render(
            target=target,
            plan_id=plan.target or target.id,
            target_literal=c_string_literal(target.id),
            core_hz=build.core_hz,
            systick_load=derive.systick_reload(build.core_hz, 1000),
            decls=collect["decls"],
            tick=collect["tick"],
            setups=collect["setup"],
            after=collect["after"],
            loops=collect["loop"],
            behaviour=build.behaviour,
        ),
        "link.ld": linker_script(target, build.dma, plan.stack_bytes, plan.heap_bytes, ram.name if ram else None,
                                 noinit=build.noinit),
        "build.json": json.dumps(build_config(target), indent=2) + "\n",
    }
    files = with_contributed(files, build.files)
    receipt = Receipt(
        realized=[f"operations[{i}] {op.op}" for i, op in enumerate(plan.operations)]
        + [f"buffer {b.name} in {b.region} ({b.symbol})" for b in build.dma],
        notes=build.notes,
    )
    return Lowered(framework=FRAMEWORK, target=target.id, files=files, receipt=receipt, user_files=USER_FILES)
