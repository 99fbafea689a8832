"""The ``react`` operation: count, log, give a semaphore, submit work or feed a task watchdog on an event."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import Reaction, check_context, check_source, deferral, hal_context, placement
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.evidence import Path, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Message, Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

Action = Literal["count", "log", "give", "submit", "feed"]

#: The operation kind each action's ``target`` must name, and what the action does to it.
TARGETS: dict[str, tuple[str, str]] = {
    "give": ("semaphore", "give"),
    "submit": ("work_item", "submit"),
    "feed": ("task_watchdog", "feed"),
}


class React(Reaction):
    """When operation ``source`` raises ``event``, run ``action``.

    count: count the events (a ``log`` may print the count, this operation's value); log: print
    ``message`` and the count (blocking: deferred to a work item when the event is raised in an ISR);
    give: give the ``semaphore`` named ``target``; submit: submit the ``work_item`` named ``target``;
    feed: feed the ``task_watchdog`` named ``target`` (the reaction is one of its supervised channels,
    e.g. a timer proving the timer interrupt still runs). Every reaction counts the times it ran.
    """

    op: Literal["react"]
    action: Action
    target: Name | None = Field(default=None, description="The semaphore / work_item / task_watchdog acted on.")
    message: Message | None = Field(default=None, description="What a log action prints before the count.")

    def blocking(self) -> bool:
        return self.action == "log"


def acting_on(plan: Plan, action: str, name: str | None) -> list[int]:
    """Indices of the reactions whose ``action`` (give, submit, feed) names the operation ``name``."""
    if name is None:
        return []
    return [
        i for i, o in enumerate(plan.operations) if isinstance(o, React) and o.action == action and o.target == name
    ]


def feeders(plan: Plan, watchdog: str | None) -> list[int]:
    """Indices of the reactions feeding the task watchdog named ``watchdog`` (each owns one channel)."""
    return acting_on(plan, "feed", watchdog)


def _check_target(plan: Plan, target: Target, framework: str, index: int, op: React) -> list[Evidence]:
    """E_REACTION_TARGET: give/submit/feed name an operation of the kind they act on; count and log
    name none; a log says what it prints."""

    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    wanted = TARGETS.get(op.action)
    if wanted is None:
        found: list[Evidence] = []
        if op.target is not None:
            found.append(
                violation(
                    "E_REACTION_TARGET",
                    f"{label} {op.action}s and acts on no operation, but names target {op.target!r}",
                    [*base, "target"],
                    [label, op.target],
                    relaxations=[relax("drop the target", remove([*base, "target"]))],
                )
            )
        if op.action == "log" and op.message is None:
            text = f"{op.source} {op.event}"
            found.append(
                violation(
                    "E_REACTION_TARGET",
                    f"{label} logs but says no message",
                    [*base, "message"],
                    [label],
                    relaxations=[relax(f"print {text!r}", replace([*base, "message"], text))],
                )
            )
        return found
    kind, verb = wanted
    fitting = [o.name for o in plan.operations if o.op == kind and o.name]
    named = plan.operation(op.target) if op.target is not None else None
    if named is not None and named.op == kind:
        return []
    detail = (
        "names none"
        if op.target is None
        else (f"{op.target!r} is a {named.op}" if named is not None else f"no operation is named {op.target!r}")
    )
    return [
        violation(
            "E_REACTION_TARGET",
            f"{label} must {verb} a {kind}; its target {detail}",
            [*base, "target"],
            [label, *([op.target] if op.target else [])],
            relaxations=[relax(f"{verb} {n}", replace([*base, "target"], n)) for n in fitting],
        )
    ]


def _zephyr(b: ZephyrBuilder, index: int, op: React) -> dict[str, Any]:
    b.app.includes.add("zephyr/sys/atomic.h")
    where = placement(b.plan, op)
    target = b.op_id(op.target) if op.target is not None else None
    view: dict[str, Any] = {
        "id": b.ids[index],
        "source": op.source,
        "event": op.event,
        "action": op.action,
        "placement": where,
        "target": target,
        "message": c_format(op.message or "") + ' " (%ld)\\n"',
        "slot": feeders(b.plan, op.target).index(index) if op.action == "feed" else None,
    }
    return view


def _espidf(b: EspIdfBuild, index: int, op: React) -> dict[str, Any]:
    """ESP-IDF: count and give in the ISR (``xSemaphoreGiveFromISR``), log (and anything deferred) in a
    task the ISR notifies. submit/feed name Zephyr-only operations, which the support rule refuses."""
    where = deferral(b, index, op)
    named = [i for i, o in enumerate(b.plan.operations) if op.target is not None and o.name == op.target]
    return {
        "placement": where,
        "action": op.action,
        "target": b.symbol(named[0], b.plan.operations[named[0]]) if named else None,
        "message": c_format(op.message or "") + ' " (%" PRIi32 ")\\n"',
        "task": b.thread(None, f"{b.symbol(index, op)}_react") if where == "work" else None,
    }


def _hal(b: HalBuild, index: int, op: React) -> dict[str, Any]:
    """STM32 HAL: count and give (``osSemaphoreRelease``, ISR-callable in CMSIS-RTOS2) in the publisher's
    HAL callback; log (and anything deferred) in the loop, which consumes the volatile count of pending
    events the callback raises and prints on the console there (HAL apps transmit only from the loop).
    submit/feed name Zephyr-only operations, which the support rule refuses first."""
    view = b.base_view(index, op)
    where = f"operations[{index}]"
    if op.action not in ("count", "log", "give"):
        raise b.unsupported(f"{where}.action", f"STM32 HAL reactions count, log or give; {op.action} names a "
                            f"{TARGETS[op.action][0]}, which has no HAL realization")  # fmt: skip
    view.update(placement=hal_context(b, index, op), action=op.action, source=op.source, event=op.event,
                target=op.target)  # fmt: skip
    if op.action == "log":
        text = op.message or ""
        view["uart"] = b.uart(None, None, where)
        view["message"] = c_format(text) + ' " (%ld)\\r\\n"'
        # Sized for the longest line: the message, the count as a 32-bit "%ld" (11 characters), CR LF, NUL.
        view["text_bytes"] = len(text) + len(" (-2147483648)\r\n") + 1
    return view


SPEC = OpSpec(
    model=React,
    family="events",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="events", view=_zephyr),
        "espidf": Realization(template="events", view=_espidf),
        "hal": Realization(template="events", view=_hal),
    },
    checks=(check_source, check_context, _check_target),
    codes=("E_REACTION_EVENT", "E_REACTION_CONTEXT", "E_REACTION_TARGET", "E_ISR_BLOCKING", "E_UNKNOWN_RESOURCE"),
)
