"""The behaviour IR: typed expressions, statements and triggers, compiled once and rendered four ways.

The IR is what every consumer of a behaviour reads: the obligations (``checks``), the trace predictor
(``predict``), the C renderings (``render``) and the receipt. It holds no plan text except where a step
prints it (``Print.parts``), and names only C-safe identifiers the compiler made from plan names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rac_fw.domains.firmware.plan.behaviour.types import VType

# --- expressions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TExpr:
    """A typed expression node (``type`` is its value's type, unit included)."""

    type: VType


@dataclass(frozen=True)
class Const(TExpr):
    value: Any
    """int / float / bool, or bytes for a constant buffer."""


@dataclass(frozen=True)
class Ref(TExpr):
    """A value by name: a variable, a loop index, an operation's output, or the machine's state."""

    symbol: Symbol


@dataclass(frozen=True)
class Unary(TExpr):
    op: str
    operand: TExpr


@dataclass(frozen=True)
class Binary(TExpr):
    op: str
    left: TExpr
    right: TExpr
    operands: VType
    """The type both sides are computed (or compared) in."""


@dataclass(frozen=True)
class Call(TExpr):
    function: str
    args: tuple[TExpr, ...]


@dataclass(frozen=True)
class Index(TExpr):
    base: TExpr
    index: TExpr


@dataclass(frozen=True)
class Convert(TExpr):
    """``operand`` converted to ``type`` (another numeric type, and/or scaled by ``factor`` for its unit)."""

    operand: TExpr
    factor: int = 1


# --- what names refer to --------------------------------------------------------------------------

SymbolKind = Literal["var", "loop", "output", "state", "state_const"]


@dataclass(frozen=True)
class Symbol:
    """What a name in an expression refers to, once resolved."""

    kind: SymbolKind
    name: str
    """The plan name (``count``, ``adc.mv``, ``connected``)."""
    c: str
    """The C identifier the renderings use (``rac_b_count``, ``op3_mv``, ``RAC_B_STATE_CONNECTED``)."""
    type: VType
    value: int | None = None
    """A state constant's number."""
    op_index: int | None = None
    """The operation an output belongs to."""


@dataclass
class Variable:
    """A behaviour variable: type, initial value, persistence, the filter or window feeding it, its guard."""

    name: str
    c: str
    type: VType
    init: Any = None
    persist: bool = False
    filter: dict[str, Any] | None = None
    """``{"kind": …, …}`` with every parameter resolved to numbers in the variable's unit."""
    window: int = 0
    """Samples kept for the reductions (mean/median/min/max/sum); 0 for a plain variable."""
    guard: str = "auto"
    contexts: set[str] = field(default_factory=set)
    """Where it is written or read: ``thread`` and/or ``isr`` (filled by the compiler)."""
    written_in: set[str] = field(default_factory=set)
    shared: str = "none"
    """How the renderings guard it: ``none``, ``atomic`` or ``lock`` (decided by the compiler)."""
    path: str = ""


# --- statements -----------------------------------------------------------------------------------


@dataclass
class Stmt:
    """One step: its registered ``kind``, its typed fields, nested blocks, and where it came from."""

    kind: str
    path: str
    """The plan field path (``behaviour.triggers[1].do[0]``) evidence and the receipt locate it by."""
    data: dict[str, Any] = field(default_factory=dict)
    exprs: dict[str, TExpr] = field(default_factory=dict)
    blocks: dict[str, list[Stmt]] = field(default_factory=dict)
    id: str = ""
    """A unique C-safe id (``s12``) for labels and locals."""


TriggerKind = Literal["boot", "every", "event", "condition", "script"]


@dataclass
class Trigger:
    """When a block of steps runs: at boot, every period, on an operation's event, on a condition edge."""

    kind: TriggerKind
    name: str
    c: str
    path: str
    body: list[Stmt]
    period_ms: int | None = None
    times: int | None = None
    in_state: str | None = None
    source_op: int | None = None
    event: str | None = None
    context: Literal["thread", "isr"] = "thread"
    """Where the body runs: in the behaviour's thread, or in the publisher's interrupt handler."""
    deferred: bool = False
    """An ISR-raised event whose body runs in the thread (the ISR only counts it)."""
    queue: int = 1
    """Pending runs kept for a deferred event or a started script (single: 1)."""
    mode: str = "queued"
    """A script's run mode: ``single``, ``restart`` or ``queued``."""
    condition: TExpr | None = None
    poll_ms: int | None = None
    resets_after: bool = False
    """The publisher resets the chip right after the event (a task-watchdog expiry)."""


@dataclass
class State:
    name: str
    number: int
    c: str
    entry: list[Stmt] = field(default_factory=list)
    exit: list[Stmt] = field(default_factory=list)


@dataclass
class Program:
    """A compiled behaviour."""

    variables: list[Variable]
    triggers: list[Trigger]
    scripts: list[Trigger]
    states: list[State]
    initial: str | None
    line_bytes: int
    """The longest line a ``print`` can produce, plus the terminator (the line buffer's size)."""
    outputs: dict[int, list[str]] = field(default_factory=dict)
    """Operation index → the outputs the behaviour reads (their ops must keep them)."""
    actions: list[tuple[int, str]] = field(default_factory=list)
    """``(operation index, action)`` pairs the behaviour calls."""
    notes: list[str] = field(default_factory=list)
    """Decisions the receipt states (a deferral, a guard)."""

    def all_triggers(self) -> list[Trigger]:
        return [*self.triggers, *self.scripts]

    def variable(self, name: str) -> Variable | None:
        return next((v for v in self.variables if v.name == name), None)

    @property
    def finite(self) -> bool:
        """Whether the behaviour can end by itself (every repeating trigger is bounded)."""
        return all(t.kind == "boot" or t.times is not None for t in self.triggers)


def walk(stmts: list[Stmt]) -> list[Stmt]:
    """Every statement of ``stmts``, nested ones included, in source order."""
    out: list[Stmt] = []
    for s in stmts:
        out.append(s)
        for block in s.blocks.values():
            out.extend(walk(block))
    return out


def sub_exprs(e: TExpr) -> list[TExpr]:
    """``e`` and every expression inside it."""
    found = [e]
    if isinstance(e, Unary | Convert):
        found += sub_exprs(e.operand)
    elif isinstance(e, Binary):
        found += sub_exprs(e.left) + sub_exprs(e.right)
    elif isinstance(e, Call):
        for a in e.args:
            found += sub_exprs(a)
    elif isinstance(e, Index):
        found += sub_exprs(e.base) + sub_exprs(e.index)
    return found


def refs(e: TExpr) -> list[Symbol]:
    """The symbols an expression reads."""
    return [x.symbol for x in sub_exprs(e) if isinstance(x, Ref)]
