"""The behaviour's obligations, judged on its IR: each violation located, with relaxations that validate.

- the compiler's own evidence (names, types, units, bounds, contexts, guards, support; a variable nothing
  reads or writes is E_BEHAVIOUR_NAME there);
- E_BEHAVIOUR_UNINIT: a variable read before every path to the read has written it (no ``init``);
- E_BEHAVIOUR_PERIOD: an ``every`` trigger whose steps take longer than its period, estimated from the
  facts (console characters at the console's baud rate, waits, actions' own costs from the bus speeds
  and transfer sizes their specs declare);
- E_BEHAVIOUR_PERSIST: persisted variables that do not fit the framework's store.
The RAM the behaviour's variables, windows, queues and line buffer take joins the plan's RAM budget
(``obligations.memory`` asks :func:`ram_bytes` through the section spec).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.contexts import _path
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN, constant
from rac_fw.domains.firmware.plan.behaviour.functions import FUNCTIONS
from rac_fw.domains.firmware.plan.behaviour.lowering import compiled
from rac_fw.domains.firmware.plan.behaviour.spec import step_spec
from rac_fw.domains.firmware.plan.evidence import add, measure, relax, replace, violation
from rac_fw.domains.firmware.plan.registry import spec as op_spec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

CODES = (
    "E_BEHAVIOUR_EXPR", "E_BEHAVIOUR_UNIT", "E_BEHAVIOUR_TYPE", "E_BEHAVIOUR_NAME", "E_BEHAVIOUR_FIELD",
    "E_BEHAVIOUR_FORMAT", "E_BEHAVIOUR_DURATION", "E_BEHAVIOUR_SIZE", "E_BEHAVIOUR_UNBOUNDED",
    "E_BEHAVIOUR_EVENT", "E_BEHAVIOUR_ACTION", "E_BEHAVIOUR_CONTEXT", "E_BEHAVIOUR_ISR_BLOCKING",
    "E_BEHAVIOUR_SHARED", "E_BEHAVIOUR_UNINIT", "E_BEHAVIOUR_PERIOD", "E_BEHAVIOUR_PERSIST",
    "E_TARGET_UNSUPPORTED",
)  # fmt: skip

#: Bytes each framework's store keeps for a behaviour's persisted variables: bare metal reserves a retained
#: block of RAM (.noinit) of this size; Zephyr's settings and ESP-IDF's NVS keep one value per variable, each
#: within its value limit (Zephyr: include/zephyr/settings/settings.h SETTINGS_MAX_VAL_LEN, 256 bytes;
#: ESP-IDF NVS: a 4000-byte blob spans at most one page's entries).
PERSIST_LIMITS: dict[str, tuple[int, str]] = {
    "baremetal": (256, "the retained RAM block (.noinit) bare metal reserves for persisted values"),
    "zephyr": (256, "one settings value (SETTINGS_MAX_VAL_LEN)"),
    "espidf": (4000, "one NVS entry"),
    "hal": (256, "the retained RAM block (.noinit) the HAL lowering reserves for persisted values"),
}
#: Stack one trigger frame of the dispatcher takes beyond its locals (return, saved registers, helpers).
FRAME_BYTES = 64


@dataclass
class Costs:
    """Durations on the target, for the period-fit obligation."""

    plan: Any
    target: Target

    def console_ms(self, chars: int) -> float:
        """``chars`` at the console's baud rate (a console without a wire, native_sim's PTY: baud 0, costs none)."""
        console = self.target.board.console
        baud = console.baud if console is not None else 115200
        return chars * 10 * 1000.0 / baud if baud else 0.0

    def action_ms(self, index: int, stmt: ir.Stmt) -> float:
        op = self.plan.operations[index]
        action = op_spec(op.op).actions[stmt.data["action"]]
        if action.cost_ms is None:
            return 0.0
        args = {k: constant(e) for k, e in stmt.exprs.items()}
        return action.cost_ms(op, self.target, args)


def _cost(stmts: list[ir.Stmt], costs: Costs, program: ir.Program, depth: int = 0) -> float:
    total = 0.0
    for s in stmts:
        own = step_spec(s.kind).cost_ms
        total += own(s, costs) if own is not None else 0.0
        if s.kind == "if":
            total += max(_cost(s.blocks["then"], costs, program, depth), _cost(s.blocks["else"], costs, program, depth))
        elif s.kind == "repeat":
            total += s.data.get("bound", 1) * _cost(s.blocks["do"], costs, program, depth)
        elif s.kind == "while":
            bound = s.data["max"]
            body = _cost(s.blocks["do"], costs, program, depth)
            total += math.inf if bound == "forever" and body > 0 else (0 if bound == "forever" else bound * body)
            total += _cost(s.blocks.get("on_limit", []), costs, program, depth)
        elif s.kind == "wait_until":
            total += _cost(s.blocks["on_timeout"], costs, program, depth)
        elif s.kind == "call" and depth < 8:
            script = next((t for t in program.scripts if t.name == s.data["script"]), None)
            total += _cost(script.body, costs, program, depth + 1) if script else 0.0
    return total


def _period(program: ir.Program, costs: Costs) -> list[Evidence]:
    found = []
    for t in program.triggers:
        if t.kind != "every" or not t.period_ms:
            continue
        work = _cost(t.body, costs, program)
        if work <= t.period_ms:
            continue
        path = _path(t.path)
        fixes = []
        if math.isfinite(work):
            fits = int(math.ceil(work / 10.0) * 10)
            fixes.append(relax(f"run it every {fits}ms", replace([*path, "every"], f"{fits}ms")))
        found.append(violation(
            "E_BEHAVIOUR_PERIOD", f"trigger {t.name} does about {work:.1f} ms of work (console output at the "
            f"console's baud rate, waits, actions) every {t.period_ms} ms: it cannot keep its period",
            [*path, "every"], [t.name], [measure("work", work, "ms"), measure("period", t.period_ms, "ms")], fixes))
    return found  # fmt: skip


def _defaults(var: ir.Variable) -> Any:
    if var.type.kind == "bytes":
        return {"fill": 0, "size": var.type.size}
    if var.type.kind == "bool":
        return False
    return 0.0 if var.type.kind == "float" else 0


_VALUES = ("var", "output")


def _value_reads(e: ir.TExpr) -> list[str]:
    """Variables and outputs ``e`` reads as values: a reduction over a window (``mean(w)``, ``count(w)``) reads
    its samples, which start empty and are never uninitialised, so it is no read of the variable's value."""
    samples = {id(a) for x in ir.sub_exprs(e) if isinstance(x, ir.Call)
               for kind, a in zip(FUNCTIONS[x.function].args, x.args, strict=True) if kind == "window"}  # fmt: skip
    return [x.symbol.name for x in ir.sub_exprs(e) if isinstance(x, ir.Ref) and x.symbol.kind in _VALUES
            and id(x) not in samples]  # fmt: skip


def _reads(s: ir.Stmt) -> list[str]:
    names = [name for e in s.exprs.values() for name in _value_reads(e)]
    return names + list(s.data.get("reads", ()))


def _refreshed(plan: Any, s: ir.Stmt) -> set[str]:
    """The outputs (``op.output``) an ``act`` statement refreshes."""
    if s.kind != "act" or s.data.get("op") is None:
        return set()
    op = plan.operations[s.data["op"]]
    return {f"{op.name}.{o}" for o in op_spec(op.op).actions[s.data["action"]].updates}


def _flow(stmts: list[ir.Stmt], known: set[str], plan: Any, found: dict[str, str]) -> set[str]:
    """Definite assignment through ``stmts``: the variables written (and operation outputs refreshed) on every
    path; reads of others noted."""
    for s in stmts:
        if s.kind == "set":
            for name, kind, what in s.data["assign"]:
                reads = _value_reads(s.exprs[what]) if kind == "expr" else ([what] if kind == "var" else [])
                for r in reads:
                    if r not in known:
                        found.setdefault(r, s.path)
                known = known | {name}
            continue
        for r in _reads(s):
            if r not in known:
                found.setdefault(r, s.path)
        if s.kind == "if":
            then = _flow(s.blocks["then"], known, plan, found)
            other = _flow(s.blocks["else"], known, plan, found)
            known = known | (then & other)
        elif s.kind == "repeat":
            after = _flow(s.blocks["do"], known, plan, found)
            times = constant(s.exprs["times"]) if "times" in s.exprs else UNKNOWN
            if times is not UNKNOWN and times > 0:
                known = after
        elif s.kind in ("while", "wait_until"):
            for block in s.blocks.values():
                _flow(block, known, plan, found)
        known = known | set(s.data.get("writes", ())) | _refreshed(plan, s)
    return known


def _outputs_ready(plan: Any, when: str, trigger: ir.Trigger | None = None) -> set[str]:
    """Outputs holding a value without any step refreshing them: after set-up, or inside their event's trigger."""
    found = set()
    for index, op in enumerate(plan.operations):
        for name, out in op_spec(op.op).outputs.items():
            if op.name is None:
                continue
            if out.ready == when == "setup" or (
                out.ready == when == "event" and trigger is not None and trigger.source_op == index
            ):
                found.add(f"{op.name}.{name}")
    return found


def _uninit(program: ir.Program, plan: Any) -> list[Evidence]:
    initial = {v.name for v in program.variables if v.init is not None} | _outputs_ready(plan, "setup")
    found: dict[str, str] = {}
    known = set(initial)
    for state in program.states:
        if state.name == program.initial:
            known = _flow(state.entry, known, plan, found)
    for t in program.triggers:
        if t.kind == "boot":
            known = _flow(t.body, known, plan, found)
    for t in program.all_triggers():
        if t.kind == "boot":
            continue
        start = (initial if t.context == "isr" and not t.deferred else known) | _outputs_ready(plan, "event", t)
        if t.condition is not None:
            for name in _value_reads(t.condition):
                if name not in start:
                    found.setdefault(name, t.path)
        _flow(t.body, start, plan, found)
    for state in program.states:
        _flow(state.entry + state.exit, known, plan, found)
    evidence = []
    for name, where in found.items():
        var = program.variable(name)
        if var is not None:
            decl = _path(var.path)
            evidence.append(violation(
                "E_BEHAVIOUR_UNINIT", f"variable {name} is read at {where} before every path there has written "
                "it, and it has no init", _path(where), [name],
                relaxations=[relax(f"initialise {name}", replace([*decl, "init"], _defaults(var)))]))
        elif "." in name:
            evidence.append(_stale_output(plan, name, where))
    return evidence  # fmt: skip


def _stale_output(plan: Any, name: str, where: str) -> Evidence:
    """An output read before any step refreshed it: the relaxation refreshes it just before the read."""
    op_name, output = name.split(".", 1)
    op = next(o for o in plan.operations if o.name == op_name)
    refreshing = [a for a, action in op_spec(op.op).actions.items() if output in action.updates]
    step = _path(where)
    fixes = [relax(f"act: {op_name}.{a} before reading it", add(step[:-1], {"act": f"{op_name}.{a}"}))
             for a in refreshing if isinstance(step[-2] if len(step) > 1 else None, int)]  # fmt: skip
    return violation("E_BEHAVIOUR_UNINIT", f"{name} is read at {where} before any step refreshed it "
                     f"({op.op}'s {output} holds a value only after {' or '.join(refreshing) or 'its event'})",
                     step, [name], relaxations=fixes)  # fmt: skip


def _persist(program: ir.Program, framework: str) -> list[Evidence]:
    kept = [v for v in program.variables if v.persist]
    limit, store = PERSIST_LIMITS.get(framework, (0, "no store"))
    sizes = {v.name: v.type.storage_bytes + 8 for v in kept}
    total = sum(sizes.values()) if framework in ("baremetal", "hal") else max(sizes.values(), default=0)
    if total <= limit:
        return []
    biggest = max(kept, key=lambda v: sizes[v.name])
    fixes = []
    if biggest.type.kind == "bytes":
        room = biggest.type.size - (total - limit)
        if room >= 1:
            fixes.append(relax(f"keep {room} bytes in {biggest.name}", replace([*_path(biggest.path), "size"], room)))
    fixes.append(relax(f"do not persist {biggest.name}", replace([*_path(biggest.path), "persist"], False)))
    return [violation(
        "E_BEHAVIOUR_PERSIST", f"persisted variables take {total} bytes; {store} holds {limit}",
        [*_path(biggest.path), "persist"], [v.name for v in kept],
        [measure("needed", total, "bytes"), measure("available", limit, "bytes")], fixes)]  # fmt: skip


def ram_bytes(program: ir.Program) -> int:
    """Static RAM the behaviour takes: variables, windows, filter state, queues and the line buffer."""
    total = program.line_bytes + 4
    for v in program.variables:
        total += v.type.storage_bytes + 4 * v.window + (8 if v.filter else 0) + (16 if v.persist else 0)
    for t in program.all_triggers():
        total += 12 + (4 * (t.queue + 1) + 2 if t.kind in ("event", "script") else 0)
    return total


def check(plan: Any, target: Target, framework: str) -> list[Evidence]:
    """Every obligation the plan's behaviour violates on ``target`` under ``framework``."""
    program, evidence = compiled(plan, target, framework)
    if program is None:
        return evidence
    return (_uninit(program, plan) + _period(program, Costs(plan, target))
            + _persist(program, framework))  # fmt: skip
