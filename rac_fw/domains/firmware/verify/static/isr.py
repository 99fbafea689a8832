"""Rule ``isr_context_safe``: which functions run in interrupt context, and what they must not call."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tree_sitter import Node

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.sdk import ApiEntry, Rules
from rac_fw.domains.firmware.verify.static.model import Program, finding, object_key
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context


def isr_functions(program: Program, rules: Rules) -> dict[str, str]:
    """Local functions that run in interrupt context → why (registration, naming, attribute, callee)."""
    isr: dict[str, str] = {}

    def mark(node: Node | None, reason: str) -> None:
        name = object_key(node)
        if name and name in program.functions:
            isr.setdefault(name, reason)

    for call in program.calls:
        for index in rules.registration_args(call.name):
            mark(call.arg_node(index), f"registered with {call.name} ({call.location})")
    fields = set(rules.section("isr").get("fields", ()))
    for name, value, unit, function in program.initializer_fields:
        if name in fields:
            mark(value, f"set as .{name} ({unit.location(value, function)})")
    for name in program.functions:
        if any(p.search(name) for p in rules.isr_patterns):
            isr.setdefault(name, "interrupt handler by name")
    for marker, names in program.attribute_functions.items():
        for name in names:
            if name in program.functions:
                isr.setdefault(name, f"declared {marker}")
    # Local functions called from an ISR body run in interrupt context too.
    frontier = list(isr)
    while frontier:
        current = frontier.pop()
        for call in program.calls:
            if call.function == current and call.name in program.functions and call.name not in isr:
                isr[call.name] = f"called from {current}() which runs in interrupt context"
                frontier.append(call.name)
    return isr


@register("isr_context_safe", "E_ISR_ALLOCATION", "E_ISR_BLOCKING", "E_ISR_LOGGING", "E_ISR_UNSAFE_CALL")
def check_isr(ctx: Context) -> list[Evidence]:
    program, rules, catalog, stdlib, isr = ctx.program, ctx.rules, ctx.catalog, ctx.stdlib, ctx.isr
    found: list[Evidence] = []
    section = rules.section("isr")
    unsafe: dict[str, str] = dict(section.get("unsafe") or {})
    timeout_args: dict[str, int] = dict(section.get("timeout_args") or {})
    no_wait = set(section.get("no_wait_tokens", ()))
    suffix = section.get("from_isr_suffix")
    blocking_param = section.get("blocking_param")
    for call in program.calls:
        if call.function not in isr or program.is_local(call.name):
            continue
        name, where = call.name, call.location
        context = f"{call.function}() runs in interrupt context ({isr[call.function]})"
        entry = catalog.get(name)
        if name in unsafe:
            found.append(
                finding("E_ISR_UNSAFE_CALL", f"{call.label} in ISR: {unsafe[name]}; {context}", where, [name])
            )
        elif suffix and not name.endswith(suffix) and f"{name}{suffix}" in catalog:
            found.append(
                finding(
                    "E_ISR_UNSAFE_CALL",
                    f"{call.label} is not interrupt-safe; {context}",
                    where,
                    [name, f"{name}{suffix}"],
                    f"use {name}{suffix}",
                )
            )
        elif name in rules.logs or name in stdlib.logs:
            found.append(
                finding(
                    "E_ISR_LOGGING",
                    f"{call.label} logs/prints in interrupt context; {context}",
                    where,
                    [name],
                    "hand the value to a thread (queue/semaphore/atomic flag) and log there",
                )
            )
        elif name in rules.allocates or name in stdlib.allocates:
            found.append(
                finding(
                    "E_ISR_ALLOCATION",
                    f"{call.label} allocates or frees heap memory in interrupt context; {context}",
                    where,
                    [name],
                    "use a statically allocated buffer or pool",
                )
            )
        elif name in rules.blocking or _has_blocking_param(entry, blocking_param):
            found.append(
                finding(
                    "E_ISR_BLOCKING",
                    f"{call.label} blocks or sleeps; {context}",
                    where,
                    [name],
                    "defer the blocking work to a thread or work queue",
                )
            )
        elif name in timeout_args:
            timeout = call.arg_text(timeout_args[name])
            if timeout not in no_wait:
                found.append(
                    finding(
                        "E_ISR_BLOCKING",
                        f"{call.label} with timeout {timeout} may block; {context}",
                        where,
                        [name, str(timeout)],
                        f"pass {' or '.join(sorted(no_wait))} in interrupt context",
                    )
                )
    return found


def _has_blocking_param(entry: ApiEntry | None, token: str | None) -> bool:
    return bool(token and entry and any(re.search(rf"\b{token}\b", p) for p in entry.params))
