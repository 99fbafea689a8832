"""What an operation spec declares: its model, one-line purpose, flags and one realization per framework.

An *op spec* is the single place that says everything rac-fw knows about one plan operation. The
registry (``ops.registry``) collects them; the plan schema, the support matrix, the observation,
obligations and every lowering read the specs instead of keeping their own lists of operation names.

A realization is how one framework renders the operation: the template file whose macro (named after
the operation) renders it, when the target's facts allow it, and the function that builds the view
the macro renders. View functions receive the framework's builder (its typed state: the plan, the
facts, what the other operations already contributed) and return plain values; they never judge the
plan — obligations did that — and never test a target name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, get_args

from rac_fw.schemas import first_sentence

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.base import Operation
    from rac_fw.domains.firmware.plan.model import Plan


class Flag(StrEnum):
    """Properties other operations and rules ask about, instead of listing operation names."""

    ISR_CONTEXT = "isr_context"
    """Its callback runs in interrupt context (an ``isr_handoff`` may name it as source)."""
    VALUE = "value"
    """It produces a value a ``log`` may print."""
    RX_RING = "rx_ring"
    """Its interrupt side fills a ring of received bytes that a thread drains."""
    HANDOFF = "handoff"
    """It connects an ISR-context source to a thread; lowered before the operations that post to it."""
    CONSOLE = "console"
    """It uses a UART (the board console unless the operation names another)."""
    WIFI_RADIO = "wifi_radio"
    """It runs the Wi-Fi radio as a station (the plan's ``wifi: true`` shorthand adds one such operation)."""


def always(target: Target) -> bool:
    """Availability of a realization that needs nothing from the target beyond the framework."""
    return True


Unit = Literal["adc", "pwm", "watchdog", "dma"]
"""A chip unit an operation cannot exist without (the support obligation asks the facts for it)."""

Endpoint = Literal["led", "button"]
"""A field naming a board LED (an output) or button (an input), or a pin the plan declares."""

ViewFn = Callable[[Any, int, Any], Any]
"""``view(builder, index, op)``: the values the template macro renders (framework-specific shape)."""

OpCheck = Callable[["Plan", "Target", str, int, Any], list["Evidence"]]
"""``check(plan, target, framework, index, op)``: one obligation of an operation, as repair evidence.

Concerns several operations share (pins, DMA reach, RAM budget) stay in their obligation modules and
are asked; what only this operation knows (a record fitting its sector, an endurance budget) lives here.
"""

SectionFn = Callable[[Any, Any], None]
"""``realize(builder, value)``: a plan-level block's contribution to one framework's builder."""

SectionCheck = Callable[["Plan", "Target", str, Any], list["Evidence"]]
"""``check(plan, target, framework, value)``: one obligation of a plan-level block."""


@dataclass(frozen=True)
class Realization:
    """How one framework realizes an operation."""

    template: str
    """Template file (``templates/<framework>/<template>.c.j2``) holding the macro named after the op."""
    view: ViewFn | None = None
    """Builds the view; None when the framework's generic code needs nothing operation-specific."""
    available: Callable[[Target], bool] = always
    """Whether the target's facts allow this realization (the board has the node, the chip the unit)."""
    admits: Callable[[Plan, Target, int, Any], list[Evidence]] | None = None
    """What this realization needs of one operation beyond the target having it (Zephyr PWM: the output
    must be an LED a ``pwm-leds`` node dims): violations with relaxations, asked by the support rule."""
    features: Mapping[str, Callable[[Target], bool]] = field(default_factory=dict)
    """Optional capabilities of this realization and when the facts allow them (``adc_scan`` on HAL:
    ``dma`` — scanning into a buffer by DMA — where the facts route an ADC unit's DMA request)."""
    ram: Callable[[Any], tuple[int, str]] | None = None
    """The RAM this realization's storage takes where it differs from the spec's ``ram`` (ESP-IDF's FAT keeps
    sector-sized buffers LittleFS does not): the RAM-budget obligation asks it first."""
    ram_relief: Callable[[Any, int], Any] | None = None
    """The relief matching this realization's ``ram`` (see :attr:`OpSpec.ram_relief`)."""
    behaviour: frozenset[str] = frozenset()
    """What a behaviour may use of the operation under this framework: ``event:<name>`` (its template calls
    the behaviour's hook where the event happens), ``action:<name>`` (its template has ``act_<name>``),
    ``output:<name>`` (its view names the C expression holding the value). The behaviour's support rule
    asks this set, and names the frameworks whose set has what a plan uses when this one lacks it."""
    quiet: bool | Callable[[Any], bool] = False
    """With a behaviour in the plan, this realization prints nothing on the console but its ``rac: <label> ok``
    (or FAIL) line (for every operation, or for those the predicate accepts): a framework whose ``main``
    reports operations in plan order predicts the console exactly around it (``behaviour.console``); around
    an operation that is not quiet the predicted trace admits other lines (its reports may come at any time)."""


OutputType = Literal["bool", "u8", "u16", "u32", "i8", "i16", "i32", "f32", "bytes"]


@dataclass(frozen=True)
class Output:
    """A value an operation produces that a behaviour may read as ``<op name>.<output>`` (``adc.mv``).

    Each framework's realization names the C expression that holds the latest value: the op's view
    carries it as ``view["outputs"][<name>]`` (the behaviour renders that text, never a guess)."""

    type: OutputType
    doc: str
    unit: str | None = None
    """A unit symbol of ``behaviour.units`` (``mV``, ``C``, ``us``)."""
    size: Callable[[Any], int] | None = None
    """Capacity of a ``bytes`` output for one operation (its buffer size)."""
    ready: Literal["setup", "action", "event"] = "setup"
    """When it first holds a value: after the op's set-up, after an action that updates it, or after its event."""
    determined: Callable[[Any], Any] | None = None
    """The value the plan itself determines (a loopback's echo), for the trace predictor; None: not determined."""


ParamKind = Literal["expr", "payload", "var"]


@dataclass(frozen=True)
class ActionParam:
    """A parameter of an operation's action: an expression of a type, a payload, or a variable to fill."""

    kind: ParamKind
    doc: str
    type: OutputType | None = None
    unit: str | None = None
    required: bool = True


@dataclass(frozen=True)
class Action:
    """Something a behaviour step can ask an operation to do (``act: {op: led, action: toggle}``).

    Each framework that realizes it renders the macro ``act_<action>(c, a)`` of the op's template (``c`` the
    op's view, ``a`` the rendered arguments, ``a.ok`` the C lvalue of the success flag when the action can
    fail); a framework whose template has no such macro does not realize the action (the support rule says
    so with the frameworks that do)."""

    doc: str
    params: Mapping[str, ActionParam] = field(default_factory=dict)
    updates: tuple[str, ...] = ()
    """Outputs the action refreshes (``read`` updates ``mv``)."""
    blocking: bool = False
    """It may wait (a bus transfer, console output): never in an interrupt handler."""
    fails: bool = False
    """It can fail at run time; ``into``/``status`` may capture the outcome."""
    cost_ms: Callable[[Any, Any, Mapping[str, Any]], float] | None = None
    """``cost_ms(op, target, args)``: its duration on the target (for the period-fit obligation)."""
    prints: Callable[[Any, Mapping[str, Any]], list[str]] | None = None
    """Console lines (regexes) the action prints, in order, for the trace predictor."""
    raises: tuple[str, ...] = ()
    """Events of the operation the action raises at once (firing a software interrupt raises ``irq``)."""


@dataclass(frozen=True)
class OpSpec:
    """Everything about one plan operation, declared once."""

    model: type[Operation]
    """The pydantic model (its ``op`` literal is the operation's kind; its docstring is the manual)."""
    family: str
    """Catalog family (gpio, uart, adc…), used to group the schema index."""
    realizations: Mapping[str, Realization] = field(default_factory=dict)
    """Framework name → realization. A framework absent here does not realize the operation."""
    flags: frozenset[Flag] = frozenset()
    needs: Unit | None = None
    """The chip unit the operation cannot exist without, whatever the framework."""
    endpoints: Mapping[str, Endpoint] = field(default_factory=dict)
    """Field name → which board item it names (``led: led`` for gpio_blink): the binder resolves these."""
    events: tuple[str, ...] = ()
    """Typed events the operation publishes (``edge``, ``expiry``, ``done``…) that reactions may attach to
    (``ops/events``); where the event is raised follows from the flags (``isr_context``: in an ISR)."""
    checks: tuple[OpCheck, ...] = ()
    """The operation's own obligations, run for every use of it by ``obligations.specs``."""
    codes: tuple[str, ...] = ()
    """Evidence codes this operation's checks and admits can emit (joined into ``obligations.CODES``)."""
    ram: Callable[[Any], tuple[int, str]] | None = None
    """Static RAM the operation's own storage takes in the default RAM (a slab's blocks) and the field that
    sizes it: the RAM-budget obligation adds it to the plan's buffers and stacks (the spec is asked, the
    budget rule is not copied)."""
    ram_relief: Callable[[Any, int], Any] | None = None
    """Given an excess in bytes, the value of the ``ram`` field that frees at least that much (None: none)."""
    clocks: Callable[[Any, Target, str], Mapping[str, int]] | None = None
    """The clock domains the operation sets when ``framework`` realizes it (a ``core_clock`` request: the PLL's
    system, bus and timer clocks): ``plan.clocks.plan_clocks`` lays them over the framework's defaults, and every
    clock-derived rule and lowering asks that view (the clock rule is asked, not copied)."""
    console_lines: Callable[[Any], list[str]] | None = None
    """Regexes of the console lines the op's set-up prints before its ``rac: <label> ok`` line (``{label}``
    stands for its label): the predicted trace and the run judge ask this instead of a list of op kinds."""
    outputs: Mapping[str, Output] = field(default_factory=dict)
    """Values a behaviour may read (``<name>.<output>``), with type, unit and when they are ready."""
    actions: Mapping[str, Action] = field(default_factory=dict)
    """What a behaviour may ask of the operation (``act``): set, toggle, transfer, read, feed…"""
    refusals: Mapping[str, Callable[[Plan, Target, int, Any], tuple[str, list[Any]]]] = field(default_factory=dict)
    """Framework name → why that framework has no realization of this operation, as ``(what the framework
    offers instead, relaxations)``: the support rule adds both to its E_TARGET_UNSUPPORTED (ESP-IDF has no
    PSA Internal Trusted Storage: its NVS, optionally encrypted, is the substitute)."""

    @property
    def kind(self) -> str:
        """The ``op`` literal (``GpioBlink`` → ``gpio_blink``)."""
        return str(get_args(self.model.model_fields["op"].annotation)[0])

    @property
    def summary(self) -> str:
        """The purpose in one sentence: the first sentence of the model's docstring."""
        return first_sentence(self.model.__doc__, self.kind)

    def has(self, flag: Flag) -> bool:
        return flag in self.flags

    def realization(self, framework: str) -> Realization | None:
        return self.realizations.get(framework)

    def ram_for(
        self, framework: str
    ) -> tuple[Callable[[Any], tuple[int, str]] | None, Callable[[Any, int], Any] | None]:
        """``(ram, ram_relief)`` under ``framework``: the realization's own when it declares them, else the spec's."""
        own = self.realizations.get(framework)
        if own is not None and own.ram is not None:
            return own.ram, own.ram_relief
        return self.ram, self.ram_relief


@dataclass(frozen=True)
class SectionSpec:
    """A plan-level block (``bootloader:``, ``config:``…): configuration of the whole application
    rather than an operation, declared once like an op spec.

    The block's model is a field of ``Plan`` called ``name``; the registry finds the spec by walking
    ``plan/sections/``. A framework absent from ``realizations`` cannot realize the block: the obligations
    answer ``E_TARGET_UNSUPPORTED`` with the frameworks that can.
    """

    name: str
    """The ``Plan`` attribute holding the block (None when the plan has no such block)."""
    model: type[Any]
    """The block's pydantic model (its docstring is the manual)."""
    family: str
    realizations: Mapping[str, SectionFn] = field(default_factory=dict)
    """Framework name → the function adding the block's settings/files to that framework's builder."""
    available: Mapping[str, Callable[[Target], bool]] = field(default_factory=dict)
    """Framework name → whether the target's facts allow the block there (default: always)."""
    checks: tuple[SectionCheck, ...] = ()
    codes: tuple[str, ...] = ()
    endpoints: Mapping[str, Endpoint] = field(default_factory=dict)
    """Block field → the board item it names (``led``/``button``), bound like an operation's endpoints."""
    why_not: Callable[[Target], str] | None = None
    """Why the block is not realizable on a target (its ``E_TARGET_UNSUPPORTED`` says so), when it can say more."""
    ram: Callable[[Plan, Target, str, Any], int] | None = None
    """Static RAM the block's realization takes in the default RAM (``ram(plan, target, framework, value)``):
    the RAM-budget obligation adds it like an operation's."""

    def realizes(self, framework: str, target: Target) -> bool:
        if framework not in self.realizations:
            return False
        allowed = self.available.get(framework)
        return allowed is None or allowed(target)
