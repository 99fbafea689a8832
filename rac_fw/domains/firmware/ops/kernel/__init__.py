"""Kernel objects between threads, ISRs and work queues: semaphores and work items.

Their waits carry the timeout the plan states (``take_timeout_ms``: milliseconds, or ``forever`` for an
unbounded wait, never a hidden default), and each exposes the small function a reaction calls
(``<id>_give()``, ``<id>_submit()``), declared ahead by the reaction, so plan order never matters.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.evidence import add, relax, replace, violation

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
