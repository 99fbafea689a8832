"""Events and reactions: an operation publishes typed events, a reaction operation attaches to one.

A publisher declares its events on its spec (``OpSpec.events``: ``gpio_input_irq`` an ``edge``,
``timer_*`` an ``expiry``, ``work_item`` a ``done``, ``task_watchdog`` an ``expiry``); where the event is
raised follows from its flags (``isr_context``: inside an interrupt handler, else in a thread).

Reactions are *operations* in ``operations`` (``react``, ``react_led``) naming their publisher in
``source``, rather than a list on the publisher or a plan-level list, because an operation already has
everything a reaction needs: a name others refer to (a log prints how often it ran), its own
obligations and evidence located at its own path, its own support row (a framework realizes the
reaction or says so), its own claims (a reaction that drives an LED claims the pin like any output),
and its own ``rac: <name> ok`` line. Publishers keep their models unchanged: their template only calls
``<reaction>_react()`` where the event happens (:func:`attached` lists them for a view).

The realizer chooses the context (:func:`placement`): a reaction runs where the event is raised unless
it may block and the event is raised in an ISR, then it is deferred to a work item on the system work
queue (Zephyr) or to a FreeRTOS task the ISR notifies (ESP-IDF: ``vTaskNotifyGiveFromISR``, the task
waits in ``ulTaskNotifyTake``; ESP-IDF's ISR publishers are gpio ISRs and ISR-dispatched esp_timer /
gptimer callbacks). A plan may insist (``context: isr`` or ``deferred``); the obligations here refuse what is
unsafe with evidence (E_ISR_BLOCKING with "defer to the work queue" as relaxation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import Path, drop_operation, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.registry import spec, specs
from rac_fw.domains.firmware.plan.spec import Flag

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.model import Plan

EventName = Literal["edge", "expiry", "done"]
"""The event vocabulary: a GPIO edge, a timer or watchdog-channel expiry, a work item that finished."""

Context = Literal["auto", "isr", "deferred"]

#: Where a reaction runs once realized: in the publisher's ISR, in the publisher's thread, or in a
#: work item on the system work queue.
Placement = Literal["isr", "thread", "work"]


class Reaction(Operation):
    """Fields every reaction has: the publishing operation, its event, and the context asked for."""

    source: Name = Field(description="Name of the operation whose event this reacts to.")
    event: EventName = Field(description="The event of that operation (see its spec's events).")
    context: Context = Field(
        default="auto",
        description="auto: where the event is raised unless the action may block in an ISR (then a work "
        "item); isr: in the interrupt handler itself; deferred: always in a system work-queue item.",
    )

    def blocking(self) -> bool:
        """Whether the action may wait (console output, a bounded wait): never inside an ISR."""
        return False


def publisher(plan: Plan, op: Reaction) -> Operation | None:
    return plan.operation(op.source)


def raised_in_isr(plan: Plan, op: Reaction) -> bool:
    source = publisher(plan, op)
    return source is not None and (spec(source.op).has(Flag.ISR_CONTEXT) or getattr(source, "EVENT_IN_ISR", False))


def placement(plan: Plan, op: Reaction) -> Placement:
    """Where the realizer runs the reaction (the obligations have refused unsafe explicit choices)."""
    if op.context == "deferred" or (op.context == "auto" and op.blocking() and raised_in_isr(plan, op)):
        return "work"
    return "isr" if raised_in_isr(plan, op) else "thread"


def attached(b: Any, index: int) -> list[dict[str, Any]]:
    """The reactions attached to operation ``index`` (a publisher's view calls their ``_react()``)."""
    name = b.plan.operations[index].name
    if name is None:
        return []
    return [{"id": b.ids[i]} for i, o in enumerate(b.plan.operations) if isinstance(o, Reaction) and o.source == name]


def reaction_symbols(b: Any, index: int) -> list[str]:
    """The C prefixes of the reactions attached to operation ``index`` on ESP-IDF, whose ISR calls each
    one's ``<sym>_react(&woken)`` (the ESP-IDF builder names operations by ``symbol``, not ``ids``)."""
    name = b.plan.operations[index].name
    return [b.symbol(i, o) for i, o in reactions_to(b.plan, name)]


def deferral(b: Any, index: int, op: Reaction) -> Placement:
    """The placement on ESP-IDF, where every publisher raises its event in an ISR (gpio ISRs, esp_timer /
    gptimer callbacks); a thread-raised event has no ESP-IDF publisher yet, so it is refused, located."""
    where = placement(b.plan, op)
    if where == "thread":
        raise b.unsupported(f"operations[{index}].source", f"{op.source} raises {op.event} in a thread: ESP-IDF "
                            "realizes reactions to interrupt events")  # fmt: skip
    return where


def hal_context(b: Any, index: int, op: Reaction) -> Placement:
    """The placement on STM32 HAL, where reactions run without a work queue: ``isr`` in the publisher's HAL
    callback (an interrupt, or the timer service thread for a ``source: kernel`` timer under FreeRTOS),
    ``thread`` where the publisher raises its event in the super-loop (``rac_loop`` under FreeRTOS), ``work``
    deferred to the loop: the callback only counts the event in a volatile word the loop consumes. An action
    in a HAL callback that calls into FreeRTOS (``osSemaphoreRelease`` -> ``xSemaphoreGiveFromISR``) needs the
    publisher's interrupt at or below the kernel's syscall priority (``hal.rtos.max_syscall_priority``)."""
    where = placement(b.plan, op)
    source = publisher(b.plan, op)
    rtos = b.hal.rtos
    if where == "isr" and getattr(op, "action", None) == "give" and source is not None and rtos is not None:
        level = getattr(source, "irq_priority", None)
        if level is not None and level < rtos.max_syscall_priority:
            raise b.unsupported(f"operations[{index}].context", f"{op.name or op.op} gives a semaphore in "
                                f"{op.source}'s interrupt at NVIC priority {level}, more urgent than FreeRTOS's "
                                f"syscall priority {rtos.max_syscall_priority}: raise {op.source}'s irq_priority "
                                f"to {rtos.max_syscall_priority} or more, or defer (context: deferred)")  # fmt: skip
    return where


def reactions_to(plan: Plan, name: str | None) -> list[tuple[int, Reaction]]:
    """The reactions attached to the operation named ``name``."""
    if name is None:
        return []
    return [(i, o) for i, o in enumerate(plan.operations) if isinstance(o, Reaction) and o.source == name]


def check_source(plan: Plan, target: Target, framework: str, index: int, op: Reaction) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE when ``source`` names no operation; E_REACTION_EVENT when it publishes no such
    event (relaxations: an event it publishes, or a publisher of this event)."""

    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    source = publisher(plan, op)
    fitting = [o.name for o in plan.operations if o.name and op.event in spec(o.op).events]
    if source is None:
        return [
            violation(
                "E_UNKNOWN_RESOURCE",
                f"{label} reacts to {op.source!r}, but no operation has that name",
                [*base, "source"],
                [op.source, label],
                relaxations=[relax(f"react to {n}", replace([*base, "source"], n)) for n in fitting]
                + [drop_operation(plan, index)],
            )
        ]
    published = spec(source.op).events
    if op.event in published:
        return []
    options = [relax(f"react to {op.source}'s {e} event", replace([*base, "event"], e)) for e in published]
    options += [relax(f"react to {n}'s {op.event} event", replace([*base, "source"], n)) for n in fitting]
    options.append(drop_operation(plan, index))
    publishers = sorted(s.kind for s in specs() if op.event in s.events)
    return [
        violation(
            "E_REACTION_EVENT",
            f"{label} reacts to {op.source}'s {op.event!r} event, but a {source.op} publishes "
            + (", ".join(repr(e) for e in published) or "no event")
            + f" ({op.event!r} comes from: {', '.join(publishers)})",
            [*base, "event"],
            [label, op.source, op.event],
            relaxations=options,
        )
    ]


def check_context(plan: Plan, target: Target, framework: str, index: int, op: Reaction) -> list[Evidence]:
    """E_ISR_BLOCKING: an action that may block asked to run in an ISR; E_REACTION_CONTEXT: ``isr`` asked
    for an event raised in a thread, or deferral asked where the publisher resets right after its event."""

    source = publisher(plan, op)
    if source is None:
        return []
    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    in_isr = raised_in_isr(plan, op)
    if op.context == "isr" and in_isr and op.blocking():
        return [
            violation(
                "E_ISR_BLOCKING",
                f"{label} would run its blocking action in {op.source}'s interrupt handler",
                [*base, "context"],
                [label, op.source],
                relaxations=[
                    relax("defer it to a work item on the system work queue", replace([*base, "context"], "deferred")),
                    relax("let rac-fw choose the context", replace([*base, "context"], "auto")),
                ],
            )
        ]
    if op.context == "isr" and not in_isr:
        return [
            violation(
                "E_REACTION_CONTEXT",
                f"{label} asks for interrupt context, but {op.source} ({source.op}) raises {op.event} in a thread",
                [*base, "context"],
                [label, op.source],
                relaxations=[relax("run it where the event is raised", replace([*base, "context"], "auto"))],
            )
        ]
    if getattr(source, "RESETS_AFTER_EVENT", False) and placement(plan, op) == "work":
        options = [] if op.blocking() else [relax("run it in the expiry callback", replace([*base, "context"], "isr"))]
        return [
            violation(
                "E_REACTION_CONTEXT",
                f"{label} would be deferred to a work item, but {op.source} resets the system right after its "
                f"{op.event}: the work item would never run",
                [*base, "context"],
                [label, op.source],
                relaxations=options or [relax(f"drop {label}", {"op": "remove", "path": base})],
            )
        ]
    return []
