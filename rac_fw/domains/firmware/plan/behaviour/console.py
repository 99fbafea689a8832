"""A plan's whole predicted console, and the run judge: boot line, the operations' lines, the behaviour's.

The trace is derived from the plan alone (never from the generated code): the boot line, each operation's
set-up line in the order the framework's ``main`` reports them (registered per framework in
:data:`OPERATION_LINES`), then the behaviour's predicted lines through ``rac: done``. :func:`judge` holds a
captured console to it line for line. A framework with no registered operation order has no prediction:
its runs are judged by the ordered expectations alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rac_fw.contract import Evidence, Verdict
from rac_fw.domains.firmware.plan.behaviour.lowering import program
from rac_fw.domains.firmware.plan.behaviour.predict import Prediction, predict
from rac_fw.domains.firmware.plan.behaviour.trace import Item, Line, exact, literal, match, to_json, window
from rac_fw.domains.firmware.plan.registry import spec

OperationLines = Callable[[Any, Any], list[Item]]
"""``lines(plan, target)``: what a framework's ``main`` prints for the operations, before the behaviour runs."""


def _label(index: int, op: Any) -> str:
    return op.name or f"{op.op}{index}"


def baremetal_lines(plan: Any, target: Any) -> list[Item]:
    """Bare metal reports every operation's set-up in plan order (``templates/baremetal/main.c.j2``): a
    ``uart_print`` on the console prints its message first; each operation then prints ``rac: <label> …``
    (its ``console`` spec entry: the lines before its ``ok`` line)."""
    console = target.board.console.uart if target.board.console else None
    items: list[Item] = []
    for index, op in enumerate(plan.operations):
        label = literal(_label(index, op))
        message = getattr(op, "message", None)
        if op.op == "uart_print" and getattr(op, "uart", None) in (None, console) and message:
            items.append(exact(message, f"operations[{index}]"))
        extra = spec(op.op).console_lines
        for pattern in extra(op) if extra is not None else []:
            items.append(Line(pattern.replace("{label}", label), f"operations[{index}]"))
        items.append(Line(rf"^rac: {label} ok\b.*$", f"operations[{index}]"))
    return items


#: Framework → what its ``main`` prints for the operations before the behaviour starts.
OPERATION_LINES: dict[str, OperationLines] = {"baremetal": baremetal_lines}


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
    behaviour = predict(found, plan, boot)
    items: list[Item] = [*boot, *behaviour.items]
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
