"""The behaviour's whole C text for one framework: the context ``program.c.j2`` renders, from the IR.

``render_program`` is what a lowering calls (through ``behaviour.lowering``): it gets the compiled program,
the views of the operations the behaviour uses (their outputs and action macros) and the name of the hook
each publisher calls, and returns the C to place in the application's main file after the operations' own
declarations. ``hooks`` tells a lowering which operation events have a hook to call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.cexpr import literal, render
from rac_fw.domains.firmware.plan.behaviour.render import INDENT, OpRef, Renderer, declaration, window_types
from rac_fw.domains.firmware.plan.behaviour.render import _element as element


def hook_name(op_name: str, event: str) -> str:
    """The C function a publisher calls when ``event`` happens (defined by the behaviour)."""
    return f"rac_b_on_{op_name}_{event}"


def hooks(program: ir.Program, plan: Any) -> dict[tuple[int, str], str]:
    """``(operation index, event) → hook name`` for every event a trigger of ``program`` listens to."""
    found: dict[tuple[int, str], str] = {}
    for trigger in program.triggers:
        if trigger.kind == "event" and trigger.source_op is not None and trigger.event is not None:
            name = plan.operations[trigger.source_op].name
            found[(trigger.source_op, trigger.event)] = hook_name(name, trigger.event)
    return found


def _filter_view(r: Renderer, var: ir.Variable) -> dict[str, Any]:
    f = var.filter or {"kind": "window", "input": var.type}
    t = var.type
    source = f["input"]
    view: dict[str, Any] = {"c": var.c, "t": t.c_type, "in": source.c_type, "e": element(t) if var.window else {},
                            "kind": f["kind"], "float": t.kind == "float", "now": str(r.rt.now_ms()).strip()}
    if f["kind"] == "exponential":
        view.update(alpha_pct=f["alpha_pct"], alpha_f=literal(f["alpha_pct"] / 100.0, t))
    elif f["kind"] == "delta":
        view["min_change"] = literal(f["min_change"], t)
    elif f["kind"] == "throttle":
        view["interval_ms"] = f["interval_ms"]
    elif f["kind"] == "hysteresis":
        view.update(low=literal(f["low"], source), high=literal(f["high"], source))
    elif f["kind"] == "calibrate":
        view.update(raw0=literal(f["raw"][0], source), raw1=literal(f["raw"][1], source),
                    to0=literal(f["to"][0], t), to1=literal(f["to"][1], t))  # fmt: skip
    return view


def _filters(r: Renderer) -> list[str]:
    module = r.env.get_template("filters.c.j2").module
    out = []
    for var in r.program.variables:
        if var.filter is None and not var.window:
            continue
        view = _filter_view(r, var)
        macro = "window" if var.window else var.filter["kind"]  # type: ignore[index]
        out.append(str(getattr(module, macro)(view)).strip("\n"))
    return out


def _start_body(r: Renderer, t: ir.Trigger) -> str:
    slots = t.queue + 1
    push = (f"const uint8_t tail = {t.c}_tail;\nconst uint8_t next = (uint8_t)((tail + 1U) % {slots}U);\n"
            f"if (next != {t.c}_head) {{\n{INDENT}{t.c}_since[tail] = {r.rt.now_ms()};\n{INDENT}{t.c}_tail = next;\n}}")
    if t.mode == "queued":
        return push
    nested = "\n".join(INDENT + line for line in push.splitlines())
    if t.mode == "single":
        return f"if (!{t.c}_running && {t.c}_head == {t.c}_tail) {{\n{nested}\n}}"
    return (f"if ({t.c}_running) {{\n{INDENT}{t.c}_restart = true;\n}} else if ({t.c}_head == {t.c}_tail) {{\n"
            f"{nested}\n}}")  # fmt: skip


def _summary(t: ir.Trigger) -> str:
    if t.kind == "every":
        return f"every {t.period_ms} ms" + (f", {t.times} times" if t.times else "")
    if t.kind == "condition":
        return f"when its condition turns true (polled every {t.poll_ms} ms)"
    if t.kind == "script":
        return f"script, {t.mode}"
    return f"on {t.event}" + (" (deferred from its interrupt)" if t.deferred else "")


def all_statements(program: ir.Program) -> list[ir.Stmt]:
    stmts = [s for t in program.all_triggers() for s in ir.walk(t.body)]
    return stmts + [s for st in program.states for s in ir.walk(st.entry + st.exit)]


def render_program(program: ir.Program, framework: str, plan: Any, ops: dict[int, OpRef],
                   isr_events: Callable[[int, str], bool]) -> str:  # fmt: skip
    """The behaviour's C for ``framework`` (``ops``: the views of the operations it reads or acts on;
    ``isr_events(index, event)``: whether that publisher raises the event in an interrupt handler)."""
    names = hooks(program, plan)
    r = Renderer(program, framework, ops, lambda i, e: names[(i, e)])
    functions = []
    for t in program.all_triggers():
        r.current = t
        r.in_isr = t.context == "isr" and not t.deferred
        functions.append({"c": t.c, "name": t.name, "path": t.path, "kind": t.kind, "mode": t.mode,
                          "body": r.block(t.body)})  # fmt: skip
    r.current, r.in_isr = None, False
    scheduled: list[dict[str, Any]] = []
    for t in program.all_triggers():
        if t.kind == "boot":
            continue
        isr = t.kind == "event" and not t.deferred
        view = {"c": t.c, "name": t.name, "path": t.path, "kind": t.kind, "times": t.times, "queue": t.queue,
                "mode": t.mode, "summary": _summary(t), "queued": t.kind in ("event", "script") and not isr,
                "isr": isr, "period": t.period_ms or t.poll_ms or 1,
                "state_test": f"rac_b_state == RAC_B_STATE_{t.in_state.upper()}" if t.in_state else "true"}
        if t.kind == "condition" and t.condition is not None:
            view["cond"] = render(t.condition, r.access)
        view["order"] = len(scheduled)
        scheduled.append(view)  # fmt: skip
    hook_views = []
    for (index, event), name in names.items():
        listeners = [t for t in program.triggers if t.source_op == index and t.event == event]
        hook_views.append({"name": name, "op": plan.operations[index].name, "event": event,
                           "isr": isr_events(index, event),
                           "triggers": [{"c": t.c, "deferred": t.deferred, "queue": t.queue, "times": t.times,
                                         "in_state": f"RAC_B_STATE_{t.in_state.upper()}" if t.in_state else None}
                                        for t in listeners]})  # fmt: skip
    states = [{"c": s.c, "number": s.number, "entry_body": r.block(s.entry, 2), "exit_body": r.block(s.exit, 2)}
              for s in program.states]  # fmt: skip
    template = r.env.get_template("program.c.j2")
    return template.render(
        rt=r.rt, line_bytes=program.line_bytes, window_types=window_types(program),
        variables=[{"c": v.c, "name": v.name, "persist": v.persist, "type": v.type, "decl": declaration(v),
                    "init": v.init} for v in program.variables],
        states=states, initial=next((s.c for s in program.states if s.name == program.initial), None),
        scheduled=scheduled,
        functions=functions, filters=_filters(r),
        scripts=[{"c": t.c, "name": t.name, "mode": t.mode, "start_body": _start_body(r, t)} for t in program.scripts],
        hooks=hook_views, boot=[t for t in program.triggers if t.kind == "boot"], finite=program.finite,
        ends=program.finite or any(s.kind == "exit" for s in all_statements(program)),
    )  # fmt: skip
