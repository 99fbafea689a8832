"""Kernel objects between threads, ISRs and work queues: semaphores and work items.

Their waits carry the timeout the plan states (``take_timeout_ms``: milliseconds, or ``forever`` for an
unbounded wait, never a hidden default), and each exposes the small function a reaction calls
(``<id>_give()``, ``<id>_submit()``), declared ahead by the reaction, so plan order never matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.evidence import add, measure, relax, replace, violation

#: Stack given to a thread a relaxation declares: above every framework's minimum (ESP-IDF: 2048 B).
DECLARED_STACK_BYTES = 4096

Timeout = Annotated[
    int | Literal["forever"],
    Field(description="How long the wait may last, in ms (0 = do not wait), or forever (unbounded)."),
]


def timeout_expr(timeout: int | str) -> str:
    """The Zephyr ``k_timeout_t`` expression of a plan timeout."""
    if timeout == "forever":
        return "K_FOREVER"
    return "K_NO_WAIT" if timeout == 0 else f"K_MSEC({timeout})"


def unknown_threads(plan: Any, framework: str, uses: list[tuple[str, list[str | int]]]) -> list[Any]:
    """E_UNKNOWN_RESOURCE for each ``(thread, path)`` not in ``resources.threads``, offering to declare it
    (with a stack every framework accepts; the shared rule for the older thread operations lives in
    ``obligations.references``; these operations declare their own)."""
    found = []
    for name, path in uses:
        if plan.thread(name) is not None:
            continue
        options = [
            relax(
                f"declare thread {name!r}",
                add(["resources", "threads", -1], {"name": name, "priority": 5, "stack_bytes": DECLARED_STACK_BYTES}),
            )
        ]
        options += [relax(f"use thread {t.name}", replace(path, t.name)) for t in plan.resources.threads[:3]]
        found.append(
            violation(
                "E_UNKNOWN_RESOURCE",
                f"thread {name!r} is not declared in resources.threads",
                path,
                [name],
                relaxations=options,
            )
        )
    return found


@dataclass(frozen=True)
class Parties:
    """How an operation shared by N named threads words its party rule (two or more distinct declared
    threads): the code, why a repeated name is wrong, and the phrases its relaxations and message use
    (``{t}``: another thread, ``{first}``: the one named, ``{new}``: a thread to declare, ``{label}``, ``{n}``)."""

    code: str
    twice: str
    join: str
    declare: str
    alone: str
    counted: str


def party_threads(plan: Any, framework: str, index: int, threads: list[str], rule: Parties) -> list[Any]:
    """The party rule of ``operations[index]`` over its ``threads``: each declared (E_UNKNOWN_RESOURCE),
    none named twice and at least two of them (``rule.code``), with relaxations that name other declared
    threads or declare a new one."""
    base: list[str | int] = ["operations", index]
    label = getattr(plan.operations[index], "name", None) or f"operations[{index}]"
    found = unknown_threads(plan, framework, [(t, [*base, "threads", i]) for i, t in enumerate(threads)])
    unique = list(dict.fromkeys(threads))
    if len(unique) != len(threads):
        found.append(
            violation(
                rule.code,
                f"{label} names a thread twice: {rule.twice}",
                [*base, "threads"],
                [label],
                relaxations=[relax("name each thread once", replace([*base, "threads"], unique))]
                if len(unique) >= 2
                else [],
            )
        )
    if len(unique) < 2:
        first = unique[0]
        others = [t.name for t in plan.resources.threads if t.name not in unique]
        options = [relax(rule.join.format(t=t, first=first), replace([*base, "threads"], [*unique, t]))
                   for t in others[:3]]
        new = f"{first}_peer"
        if plan.thread(new) is None:
            declared = {"name": new, "priority": 5, "stack_bytes": DECLARED_STACK_BYTES}
            options.append(
                relax(
                    rule.declare.format(new=new, first=first),
                    add(["resources", "threads", -1], declared),
                    replace([*base, "threads"], [*unique, new]),
                )
            )
        found.append(
            violation(
                rule.code,
                rule.alone.format(label=label, n=len(unique)),
                [*base, "threads"],
                [label, *unique],
                [measure(rule.counted, len(unique), "threads")],
                options,
            )
        )
    return found
