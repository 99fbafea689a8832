"""Where each part of a behaviour runs, and what that obliges: interrupt or thread, guards, support.

Decided once on the typed IR, here, and stated in the receipt (``Program.notes``):

- an event raised in an interrupt runs its steps in the handler when none of them may block, else the
  handler only counts it and the behaviour's thread runs the steps (deferred, bounded by ``queue``); a plan
  may insist on ``context: isr`` (refused when a step blocks: E_BEHAVIOUR_ISR_BLOCKING) or ``thread``;
  a publisher that resets the chip right after its event cannot have its steps deferred;
- a variable an interrupt handler and the thread both touch is guarded: a word by atomics, anything wider
  (bytes, windows, filters, f32) by a critical section; ``guard: atomic`` on something atomics cannot
  guard is E_BEHAVIOUR_SHARED;
- every operation event, action and output the behaviour uses must be realized by its operation on the
  plan's framework (``Realization.behaviour``), else E_TARGET_UNSUPPORTED naming the frameworks that do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.spec import step_spec
from rac_fw.domains.firmware.plan.evidence import Path, relax, remove, replace
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.plan.paths import format_path
from rac_fw.domains.firmware.plan.registry import spec as op_spec
from rac_fw.domains.firmware.plan.spec import Flag

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.behaviour.compile import Compiler
    from rac_fw.domains.firmware.plan.behaviour.model import EventTrigger

FRAMEWORKS = ("zephyr", "espidf", "hal", "baremetal")


def _path(text: str) -> Path:
    """``behaviour.triggers[2].do[0]`` → ``["behaviour", "triggers", 2, "do", 0]``."""
    parts: Path = []
    for chunk in text.replace("]", "").split("."):
        name, *indices = chunk.split("[")
        if name:
            parts.append(name)
        parts.extend(int(i) for i in indices)
    return parts


def supports(c: Compiler, index: int, feature: str, path: Path) -> bool:
    """Whether operation ``index`` offers ``feature`` (``event:edge``…) to a behaviour on the plan's framework;
    E_TARGET_UNSUPPORTED with the frameworks that do, when it does not."""
    op = c.plan.operations[index]
    spec = op_spec(op.op)
    mine = spec.realization(c.framework)
    if mine is not None and feature in mine.behaviour:
        return True
    others = [f for f in FRAMEWORKS if f != c.framework and (r := spec.realization(f)) is not None
              and feature in r.behaviour and realizes(f, op.op, c.target)]  # fmt: skip
    elsewhere = [f for f in FRAMEWORKS if (r := spec.realization(f)) is not None and feature in r.behaviour]
    kind, name = feature.split(":", 1)
    where = (f"; {', '.join(others)} on {c.target.id} realize it" if others
             else f"; realized on {', '.join(elsewhere)}" if elsewhere else "; no framework realizes it yet")
    c.error("E_TARGET_UNSUPPORTED", f"{c.framework} does not realize {op.op}'s {kind} {name!r} for a "
            f"behaviour{where}", path, [op.name or op.op, c.framework],
            [relax(f"use the {f} framework", replace(["framework"], f)) for f in others])  # fmt: skip
    return False


def raised_in_isr(op: Any, event: str | None = None) -> bool:
    """Whether ``op`` raises ``event`` in an interrupt handler: its flags say so, unless the op model lists the
    event among its ``THREAD_EVENTS`` (a line a UART's loop assembles from what its interrupt received)."""
    if event is not None and event in getattr(op, "THREAD_EVENTS", frozenset()):
        return False
    return op_spec(op.op).has(Flag.ISR_CONTEXT) or bool(getattr(op, "EVENT_IN_ISR", False))


def bind_event(c: Compiler, trigger: ir.Trigger, decl: EventTrigger, path: Path) -> None:
    """Resolve an event trigger's publisher and event; record the context the plan asked for."""
    source, event = decl.event.split(".", 1)
    found = c.op_named(source, [*path, "event"])
    if found is None:
        return
    index, op = found
    events = op_spec(op.op).events
    if event not in events:
        publishers = [o.name for o in c.plan.operations if o.name and event in op_spec(o.op).events]
        c.error("E_BEHAVIOUR_EVENT", f"{source} ({op.op}) raises {', '.join(events) or 'no event'}, not "
                f"{event!r}", [*path, "event"], [source, event],
                [relax(f"on {source}'s {e}", replace([*path, "event"], f"{source}.{e}")) for e in events]
                + [relax(f"on {n}'s {event}", replace([*path, "event"], f"{n}.{event}")) for n in publishers])
        return  # fmt: skip
    if not supports(c, index, f"event:{event}", [*path, "event"]):
        return
    trigger.source_op, trigger.event = index, event
    trigger.queue = decl.queue
    trigger.resets_after = bool(getattr(op, "RESETS_AFTER_EVENT", False))
    trigger.context = "isr" if raised_in_isr(op, event) else "thread"
    trigger.deferred = decl.context == "thread" and trigger.context == "isr"
    if decl.context == "isr" and trigger.context == "thread":
        c.error("E_BEHAVIOUR_CONTEXT", f"{source} raises {event} in a thread, not an interrupt",
                [*path, "context"], [source],
                [relax("let rac-fw choose (auto)", replace([*path, "context"], "auto"))])  # fmt: skip
    trigger.mode = decl.context


def blocking(c: Compiler, stmts: list[ir.Stmt], program: ir.Program, seen: frozenset[str] = frozenset()) -> list[
        ir.Stmt]:  # fmt: skip
    """The statements of ``stmts`` (scripts they call and state changes included) that may block."""
    found = []
    scripts = {s.name: s for s in program.scripts}
    states = {s.name: s for s in program.states}
    for stmt in ir.walk(stmts):
        if step_spec(stmt.kind).blocking or stmt.data.get("blocking"):
            found.append(stmt)
        callee = stmt.data.get("script") if stmt.kind == "call" else None
        if callee in scripts and callee not in seen:
            found += blocking(c, scripts[callee].body, program, seen | {callee})
        if stmt.kind == "goto":
            for state in states.values():
                found += blocking(c, state.entry + state.exit, program, seen)
    return found


def _place_event(c: Compiler, trigger: ir.Trigger, program: ir.Program) -> None:
    asked = trigger.mode
    trigger.mode = "queued"
    if trigger.context != "isr":
        return
    slow = blocking(c, trigger.body, program)
    path = _path(trigger.path)
    if asked == "isr" and slow:
        c.error("E_BEHAVIOUR_ISR_BLOCKING", f"trigger {trigger.name} runs in the interrupt handler, but "
                f"{slow[0].kind} at {slow[0].path} may block there", [*path, "context"], [trigger.name, slow[0].kind],
                [relax("let rac-fw defer the blocking steps (context: auto)", replace([*path, "context"], "auto"))])
        return  # fmt: skip
    if asked == "thread" or (asked == "auto" and slow):
        if trigger.resets_after:
            c.error("E_BEHAVIOUR_ISR_BLOCKING", f"trigger {trigger.name}: the chip resets right after "
                    f"{trigger.event}, so {slow[0].kind if slow else 'its steps'} at "
                    f"{slow[0].path if slow else trigger.path} cannot be deferred to the thread; keep only "
                    "interrupt-safe steps (set, if, act on a pin)", [*path, "do"], [trigger.name])  # fmt: skip
            return
        trigger.deferred = True
        program.notes.append(f"{trigger.name}: {trigger.event} is raised in an interrupt; its steps run in the "
                             f"behaviour's thread (the handler counts it, up to {trigger.queue} pending)"
                             + (f" because {slow[0].kind} at {slow[0].path} may block" if slow else ""))
        return  # fmt: skip
    program.notes.append(f"{trigger.name}: runs in the interrupt handler of {trigger.event} (no step blocks)")


def _uses(stmts: list[ir.Stmt]) -> tuple[set[str], set[str]]:
    """Variables ``stmts`` read and write."""
    reads: set[str] = set()
    writes: set[str] = set()
    for stmt in ir.walk(stmts):
        for e in stmt.exprs.values():
            reads |= {s.name for s in ir.refs(e) if s.kind == "var"}
        reads |= set(stmt.data.get("reads", ()))
        writes |= set(stmt.data.get("writes", ()))
    return reads, writes


def _guard(c: Compiler, program: ir.Program) -> None:
    where: dict[str, set[str]] = {}
    for trigger in program.all_triggers():
        context = "isr" if trigger.context == "isr" and not trigger.deferred else "thread"
        reads, writes = _uses(trigger.body)
        for name in reads | writes:
            where.setdefault(name, set()).add(context)
        for name in writes:
            var = program.variable(name)
            if var is not None:
                var.written_in.add(context)
        if trigger.condition is not None:
            for s in ir.refs(trigger.condition):
                where.setdefault(s.name, set()).add("thread")
    for state in program.states:
        reads, writes = _uses(state.entry + state.exit)
        for name in reads | writes:
            where.setdefault(name, set()).add("thread")
    for var in program.variables:
        var.contexts = where.get(var.name, set())
        if var.contexts != {"isr", "thread"}:
            continue
        word = var.type.kind in ("int", "bool", "state") and var.type.bits <= 32 and not var.window and not var.filter
        if var.guard == "atomic" and not word:
            path = _path(var.path)
            c.error("E_BEHAVIOUR_SHARED", f"variable {var.name} ({var.type.described()}"
                    f"{', a window' if var.window else ''}) is shared by an interrupt and the thread: atomics "
                    "guard one word, so it would be unguarded", [*path, "guard"], [var.name],
                    [relax("guard it with a critical section (lock)", replace([*path, "guard"], "lock")),
                     relax("let rac-fw choose (auto)", replace([*path, "guard"], "auto"))])  # fmt: skip
            continue
        var.shared = "atomic" if word and var.guard != "lock" else "lock"
        program.notes.append(f"variable {var.name} is shared by an interrupt and the thread: "
                             + ("atomic loads and stores" if var.shared == "atomic" else "a critical section"))


def place(c: Compiler, program: ir.Program) -> None:
    """Decide every context and guard (evidence for what cannot be placed)."""
    for trigger in program.triggers:
        if trigger.kind == "event":
            _place_event(c, trigger, program)
    for trigger in program.triggers:
        if trigger.context == "isr" and not trigger.deferred:
            for stmt in ir.walk(trigger.body):
                if stmt.kind == "start":
                    continue
                if stmt.kind == "call" and blocking(c, [stmt], program):
                    c.error("E_BEHAVIOUR_ISR_BLOCKING", f"{stmt.path} calls a script that may block, inside "
                            f"{trigger.name}'s interrupt handler: start it instead (queued for the thread)",
                            _path(stmt.path), [trigger.name],
                            [relax("start the script", replace(_path(stmt.path)[:-1], {"start": stmt.data["script"]}))])
    _guard(c, program)
    for var in program.variables:
        if not var.contexts:  # nothing reads or writes it: it would change nothing (and C warns on it)
            c.error("E_BEHAVIOUR_NAME", f"variable {var.name} is declared but no step, condition or state reads or "
                    "writes it", [*_path(var.path), "name"], [var.name],
                    [relax(f"remove {var.name}", remove(_path(var.path)))])  # fmt: skip


__all__ = ["bind_event", "blocking", "format_path", "place", "raised_in_isr", "supports"]
