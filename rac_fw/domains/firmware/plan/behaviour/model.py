"""The plan's ``behaviour:`` block, as the agent writes it (pydantic, closed models).

    behaviour:
      vars:
        - {name: sum, type: u32, init: 0}
      triggers:
        - on: boot
          do:
            - repeat: {times: 5, as: i, do: [{print: "item {i}"}, {set: {sum: "sum + i"}}]}
            - print: "done sum={sum}"

Steps are one-key mappings whose models come from the step registry (``spec.step_specs``); the union is
discriminated by the key, so an unknown step is named in the error. Semantics (typing, units, bounds,
contexts) are checked by the compiler and the obligations, which locate every problem by field path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, StringConstraints, Tag

from rac_fw.domains.firmware.plan.behaviour.fields import Duration, Expr, Payload, _Closed
from rac_fw.domains.firmware.plan.behaviour.spec import step_specs
from rac_fw.domains.firmware.plan.behaviour.types import TYPE_NAMES
from rac_fw.domains.firmware.plan.behaviour.units import SYMBOLS
from rac_fw.domains.firmware.plan.fields import Name

UnitSymbol = Literal[SYMBOLS]  # type: ignore[valid-type]
TypeName = Literal[TYPE_NAMES]  # type: ignore[valid-type]


def _step_key(value: Any) -> str | None:
    if isinstance(value, dict):
        return str(next(iter(value))) if len(value) == 1 else None
    for spec in step_specs():
        if isinstance(value, spec.model):
            return spec.kind
    return None


if TYPE_CHECKING:
    Step = Any
else:
    Step = Annotated[
        Union[tuple(Annotated[s.model, Tag(s.kind)] for s in step_specs())],  # noqa: UP007
        Discriminator(_step_key),
    ]

Steps = Annotated[list[Step], Field(max_length=64)]


# --- filters --------------------------------------------------------------------------------------


class MovingAverage(_Closed):
    """The mean of the last ``window`` samples."""

    kind: Literal["moving_average"]
    window: int = Field(ge=2, le=32)


class Median(_Closed):
    """The median of the last ``window`` samples (rejects single spikes)."""

    kind: Literal["median"]
    window: int = Field(ge=3, le=31)


class Exponential(_Closed):
    """Exponential smoothing: each sample moves the value ``alpha_pct`` % of the way (the first sample sets it)."""

    kind: Literal["exponential"]
    alpha_pct: int = Field(ge=1, le=100)


class Delta(_Closed):
    """Keep a new sample only when it differs from the value by at least ``min_change``."""

    kind: Literal["delta"]
    min_change: Expr


class Throttle(_Closed):
    """Keep at most one sample per ``interval``."""

    kind: Literal["throttle"]
    interval: Duration


class Hysteresis(_Closed):
    """A bool that turns true when a sample reaches ``high`` and false when one falls to ``low``."""

    kind: Literal["hysteresis"]
    low: Expr
    high: Expr


class Calibrate(_Closed):
    """Two-point linear calibration: a sample of ``raw[0]`` reads ``to[0]``, one of ``raw[1]`` reads ``to[1]``."""

    kind: Literal["calibrate"]
    raw: tuple[Expr, Expr]
    to: tuple[Expr, Expr]


Filter = Annotated[
    MovingAverage | Median | Exponential | Delta | Throttle | Hysteresis | Calibrate, Field(discriminator="kind")
]


class Variable(_Closed):
    """A typed variable of the behaviour (``set`` writes it; expressions read it by name).

    ``unit`` makes arithmetic and comparisons unit-checked (``1.5V`` meets ``mV`` scaled). ``persist``
    keeps the value across resets in the framework's store (Zephyr settings, ESP-IDF NVS, retained RAM on
    bare metal): it is restored at boot and saved on every ``set``. ``window`` keeps the last N samples for
    ``mean``/``median``/``min``/``max``/``sum``; a ``filter`` turns every ``set`` into a sample it filters.
    ``guard`` is how a variable shared by an interrupt and the thread is protected: auto (the tool chooses
    atomics for a word, a critical section otherwise), atomic, or lock.
    """

    name: Name
    type: TypeName = "i32"
    unit: UnitSymbol | None = None
    init: int | float | bool | Payload | None = Field(
        default=None, description="Initial value (a payload for bytes); without it, write before reading."
    )
    size: int | None = Field(default=None, ge=1, le=256, description="Capacity of a bytes variable (default 32).")
    persist: bool = False
    window: int | None = Field(default=None, ge=2, le=32, description="Samples kept for the reductions.")
    filter: Filter | None = None
    guard: Literal["auto", "atomic", "lock"] = "auto"


# --- triggers -------------------------------------------------------------------------------------


class _Trigger(_Closed):
    name: Name | None = Field(default=None, description="Needed by `stop: NAME` from another trigger.")
    do: Steps


class _Repeating(_Trigger):
    times: int | None = Field(default=None, ge=1, le=100_000, description="Run at most this many times.")
    in_state: Name | None = Field(default=None, description="Run only while the machine is in this state.")


class BootTrigger(_Trigger):
    """``at: boot``: run once at start, after every operation's set-up; other triggers start after it."""

    at: Literal["boot"]


class EveryTrigger(_Repeating):
    """``every: 100ms``: run every period (the first run one period after the boot steps end)."""

    every: Duration


EventRef = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}\.[a-z][a-z0-9_]{0,31}$"),
    Field(description="<operation name>.<event>, e.g. button.edge (rac-fw schema firmware --op KIND lists events)."),
]


class EventTrigger(_Repeating):
    """``event: button.edge``: run when an operation raises one of its events.

    An event raised in an interrupt runs its steps there when every step is interrupt-safe, else in the
    behaviour's thread (``context: auto``); ``queue`` bounds the events kept while the thread is busy.
    """

    event: EventRef
    context: Literal["auto", "isr", "thread"] = "auto"
    queue: int = Field(default=4, ge=1, le=32)


class ConditionTrigger(_Repeating):
    """``when: "level > 1500mV"``: run when the condition becomes true (checked every ``poll``; it must turn
    false before it fires again)."""

    when: Expr
    poll: Duration = "10ms"


TRIGGER_KEYS = ("at", "every", "event", "when")


#: Every field a trigger may have besides its kind key (for located errors on a mistyped kind).
TRIGGER_FIELDS = frozenset().union(*(m.model_fields for m in (BootTrigger, EveryTrigger, EventTrigger,
                                                                ConditionTrigger))) - set(TRIGGER_KEYS)


def _trigger_key(value: Any) -> str | None:
    if isinstance(value, dict):
        return next((k for k in TRIGGER_KEYS if k in value), None)
    kinds = ((BootTrigger, "at"), (EveryTrigger, "every"), (EventTrigger, "event"), (ConditionTrigger, "when"))
    return next((key for model, key in kinds if isinstance(value, model)), None)


if TYPE_CHECKING:
    Trigger = Any
else:
    Trigger = Annotated[
        Union[Annotated[BootTrigger, Tag("at")], Annotated[EveryTrigger, Tag("every")],  # noqa: UP007
              Annotated[EventTrigger, Tag("event")], Annotated[ConditionTrigger, Tag("when")]],
        Discriminator(_trigger_key),
    ]  # fmt: skip


class Script(_Closed):
    """Named steps run by ``call`` (now, in the caller) or ``start`` (queued for the behaviour's thread).

    ``mode`` says what a ``start`` does while the script is pending or running: single (ignored), restart
    (its current wait ends and it starts over), queued (kept, up to ``queue`` starts).
    """

    name: Name
    mode: Literal["single", "restart", "queued"] = "single"
    queue: int | None = Field(default=None, ge=2, le=16, description="Starts kept in queued mode (default 4).")
    do: Steps


class StateDecl(_Closed):
    """A state of the machine: steps run on entering and on leaving it."""

    name: Name
    entry: Steps = Field(default_factory=list)
    exit: Steps = Field(default_factory=list)


class Machine(_Closed):
    """A state machine: ``goto`` changes state (running exit then entry steps); triggers may be limited to
    a state with ``in_state``; ``state`` in an expression is the current state (``state == connected``)."""

    initial: Name
    states: list[StateDecl] = Field(min_length=2, max_length=16)


class Behaviour(_Closed):
    """What the application does with its operations: variables, triggers and their steps, scripts, states.

    Boot steps run once after every operation's set-up; then the other triggers run, one at a time, in the
    behaviour's own thread (or in an interrupt handler, for interrupt events whose steps are all safe
    there). The behaviour ends, printing ``rac: done``, when an ``exit`` step runs or when every trigger
    has run its ``times``; a behaviour with an unbounded trigger prints ``rac: done`` after its boot steps
    and runs on. The tool predicts the console lines in order (the receipt's trace) and checks a run.
    """

    vars: list[Variable] = Field(default_factory=list, max_length=64)
    triggers: list[Trigger] = Field(min_length=1, max_length=32)
    scripts: list[Script] = Field(default_factory=list, max_length=16)
    machine: Machine | None = None


def _rebuild() -> None:
    """Resolve the step models' nested ``Steps`` now that the union exists."""
    namespace = {"Step": Step, "Steps": Steps, "Expr": Expr, "Duration": Duration, "Payload": Payload}
    for spec in step_specs():
        spec.model.model_rebuild(_types_namespace=namespace)
    for model in (_Trigger, _Repeating, BootTrigger, EveryTrigger, EventTrigger, ConditionTrigger, Script,
                  StateDecl, Machine, Behaviour):  # fmt: skip
        model.model_rebuild(_types_namespace=namespace)


_rebuild()
