"""A plan's whole predicted console, and the run judge: boot line, the operations' lines, the behaviour's.

The trace is derived from the plan alone (never from the generated code): the boot line, each operation's
set-up line in the order the framework's ``main`` reports them (registered per framework in
:data:`OPERATION_LINES`), then the behaviour's predicted lines through ``rac: done``. :func:`judge` holds a
captured console to it line for line. A framework with no registered operation order has no prediction:
its runs are judged by the ordered expectations alone. Where operations may print while the behaviour runs
(:data:`AMBIENT`: on Zephyr, an operation whose realization is not ``quiet``), other lines are admitted
between the behaviour's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rac_fw.contract import Evidence, Verdict
from rac_fw.domains.firmware.plan.behaviour.lowering import program
from rac_fw.domains.firmware.plan.behaviour.predict import Prediction, predict
from rac_fw.domains.firmware.plan.behaviour.trace import (
    Choice,
    Item,
    Line,
    Open,
    Repeat,
    exact,
    literal,
    match,
    to_json,
    window,
)
from rac_fw.domains.firmware.plan.registry import spec

OperationLines = Callable[[Any, Any], list[Item]]
"""``lines(plan, target)``: what a framework's ``main`` prints for the operations, before the behaviour runs."""


def _label(index: int, op: Any) -> str:
    return op.name or f"{op.op}{index}"


def _setup_lines(index: int, op: Any, console: str | None, repeats: bool = True) -> list[Item]:
    """What operation ``index`` prints while it is set up, before its ``ok`` line: a ``uart_print`` on the
    console its message (``repeats``: a repeating one too; where it is not, its first print comes from the
    loop); an operation with a ``console_lines`` spec entry those lines."""
    items: list[Item] = []
    message = getattr(op, "message", None)
    once = repeats or getattr(op, "repeat_interval_ms", None) is None
    if op.op == "uart_print" and getattr(op, "uart", None) in (None, console) and message and once:
        items.append(exact(message, f"operations[{index}]"))
    extra = spec(op.op).console_lines
    for pattern in extra(op) if extra is not None else []:
        items.append(Line(pattern.replace("{label}", literal(_label(index, op))), f"operations[{index}]"))
    return items


def _ok_line(index: int, op: Any) -> Item:
    return Line(rf"^rac: {literal(_label(index, op))} ok\b.*$", f"operations[{index}]")


def baremetal_lines(plan: Any, target: Any) -> list[Item]:
    """Bare metal reports every operation's set-up in plan order (``templates/baremetal/main.c.j2``): a
    ``uart_print`` on the console prints its message first; each operation then prints ``rac: <label> …``
    (its ``console`` spec entry: the lines before its ``ok`` line)."""
    console = target.board.console.uart if target.board.console else None
    items: list[Item] = []
    for index, op in enumerate(plan.operations):
        items += [*_setup_lines(index, op, console), _ok_line(index, op)]
    return items


def hal_lines(plan: Any, target: Any) -> list[Item]:
    """STM32 HAL's ``main`` (``templates/hal/main.c.j2``) starts every operation in plan order (a one-shot
    ``uart_print`` on the console prints its message there, a watchdog its expiry report), then its loop reports
    each one's ``rac: <label> ok`` in plan order, and the behaviour starts after the last. An operation whose
    realization is not quiet may print from the loop when it likes: then other lines are admitted before each
    report."""
    console = target.board.console.uart if target.board.console else None
    started = [item for index, op in enumerate(plan.operations) for item in _setup_lines(index, op, console, False)]
    reports = [_ok_line(index, op) for index, op in enumerate(plan.operations)]
    why = hal_ambient(plan)
    return started + (admit_between(reports, why) if why else reports)


def hal_ambient(plan: Any) -> str | None:
    """STM32 HAL: what its operations that are not quiet print from the loop while the behaviour runs."""
    loud = [_label(i, op) for i, op in enumerate(plan.operations) if not _quiet(op, "hal")]
    return f"what {', '.join(loud)} print while the behaviour runs" if loud else None


def _quiet(op: Any, framework: str) -> bool:
    found = spec(op.op).realization(framework)
    if found is None:
        return False
    return found.quiet(op) if callable(found.quiet) else found.quiet


def zephyr_lines(plan: Any, target: Any) -> list[Item]:
    """Zephyr's ``main`` with a behaviour (``templates/zephyr/main_behaviour.c.j2``) runs every set-up, then
    reports each operation in plan order with ``rac: <label> ok`` (after its set-up, its one-shot step or the
    first run of its periodic step). A quiet realization prints nothing else; where one is not, its set-up
    and step reports are admitted (after the boot line, before its ok line) but not predicted."""
    items: list[Item] = []
    loud = [_label(i, op) for i, op in enumerate(plan.operations) if not _quiet(op, "zephyr")]
    if loud:
        items.append(Open(f"the set-up reports of {', '.join(loud)}"))
    for index, op in enumerate(plan.operations):
        label = _label(index, op)
        if label in loud and not isinstance(items[-1], Open):
            items.append(Open(f"{label}'s own reports"))
        items.append(Line(rf"^rac: {literal(label)} ok$", f"operations[{index}]"))
    return items


def loud(plan: Any, framework: str) -> str | None:
    """Why other lines may come between the behaviour's: an operation whose ``framework`` realization is not
    quiet reports when it likes (its periodic step, its thread, its task), so the behaviour's lines are predicted
    in order with others admitted between them (None: every operation is quiet, the trace is exact)."""
    labels = [_label(i, op) for i, op in enumerate(plan.operations) if not _quiet(op, framework)]
    return f"what {', '.join(labels)} print while the behaviour runs" if labels else None


def zephyr_ambient(plan: Any) -> str | None:
    """Zephyr: what its operations that are not quiet print (:func:`loud`)."""
    return loud(plan, "zephyr")


def espidf_lines(plan: Any, target: Any) -> list[Item]:
    """ESP-IDF's ``app_main`` with a behaviour (``templates/espidf/main/main.c.j2``) sets the operations up in plan
    order and, after each quiet one, waits for its ``rac: <label> ok`` (printed by ``app_main`` or by the
    operation's own task at its first run) before the next; an operation that is not quiet reports from its task
    when it likes, so with one in the plan other lines are admitted before each quiet report."""
    items: list[Item] = [Line(rf"^rac: {literal(_label(i, op))} ok$", f"operations[{i}]")
                         for i, op in enumerate(plan.operations) if _quiet(op, "espidf")]  # fmt: skip
    why = espidf_ambient(plan)
    return admit_between(items, why) if why else items


def espidf_ambient(plan: Any) -> str | None:
    """ESP-IDF: what its operations that are not quiet print (:func:`loud`)."""
    return loud(plan, "espidf")


def admit_between(items: list[Item] | tuple[Item, ...], why: str) -> list[Item]:
    """``items`` with any other lines admitted before each of their lines (an ``Open`` ahead of each)."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Line):
            out += [Open(why), item]
        elif isinstance(item, Repeat):
            out.append(Repeat(tuple(admit_between(item.items, why)), item.lo, item.hi))
        elif isinstance(item, Choice):
            out.append(Choice(tuple(tuple(admit_between(o, why)) for o in item.options)))
        else:
            out.append(item)
    return out


#: Framework → what its ``main`` prints for the operations before the behaviour starts.
OPERATION_LINES: dict[str, OperationLines] = {"baremetal": baremetal_lines, "zephyr": zephyr_lines,
                                             "espidf": espidf_lines, "hal": hal_lines}
#: Framework → why other lines may come between the behaviour's own (None: none will), for a plan.
AMBIENT: dict[str, Callable[[Any], str | None]] = {"zephyr": zephyr_ambient, "espidf": espidf_ambient,
                                                  "hal": hal_ambient}
#: Framework → what the chip prints after a ``reset: chip`` before the app's ``rac: boot`` line (the ESP32 ROM
#: and the second-stage bootloader always print; bare metal and Zephyr without its banner print nothing).
AFTER_RESET: dict[str, str] = {"espidf": "the ROM's and the bootloader's lines after the reset"}


@dataclass
class Predicted:
    """A plan's predicted console and how the behaviour ends."""

    items: list[Item]
    prediction: Prediction

    def to_json(self) -> list[dict[str, Any]]:
        return to_json(self.items)


def predicted(plan: Any, target: Any, framework: str) -> Predicted | None:
    """The whole predicted console of ``plan`` (None: no behaviour, or no operation order for ``framework``)."""
    lines = OPERATION_LINES.get(framework)
    found = program(plan, target, framework)
    if found is None or lines is None:
        return None
    boot: list[Item] = [Line(r"^rac: boot\b.*$", "main"), *lines(plan, target)]
    before = AFTER_RESET.get(framework)
    behaviour = predict(found, plan, [Open(before), *boot] if before else boot)
    ambient = AMBIENT.get(framework)
    why = ambient(plan) if ambient is not None else None
    own = admit_between(behaviour.items, why) if why else behaviour.items
    items: list[Item] = [*boot, *own]
    return Predicted(items, behaviour)


def receipt_notes(plan: Any, target: Any, framework: str) -> list[str]:
    """What the receipt says of the behaviour: the compiler's placement decisions and the prediction's limits."""
    found = program(plan, target, framework)
    if found is None:
        return []
    notes = [f"behaviour: {n}" for n in found.notes]
    guess = predicted(plan, target, framework)
    if guess is not None:
        notes += [f"behaviour: {n}" for n in guess.prediction.notes]
        notes.append(f"behaviour: predicted end: {guess.prediction.ends}")
    return notes


def judge(plan: Any, target: Any, framework: str, transcript: str) -> tuple[list[Verdict], list[Evidence]]:
    """The run's console, from ``rac: boot`` to ``rac: done``, against the predicted trace, line for line."""
    guess = predicted(plan, target, framework)
    if guess is None:
        return [], []
    outcome = match(guess.items, window(transcript.splitlines()))
    return [outcome.verdict()], outcome.evidence()
