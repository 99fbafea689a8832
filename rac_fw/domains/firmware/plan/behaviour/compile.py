"""Compile a plan's ``behaviour:`` block into the IR, locating every problem as evidence.

The compiler binds every name once (variables, loop indices, operations' outputs, scripts, states,
triggers), types every expression with its units, and asks each step's spec to compile its step. What it
cannot type is evidence at the step's field path with the expression's column; nothing it refuses reaches
a lowering. Context decisions (where an event's steps run, how a shared variable is guarded) are taken
afterwards by ``contexts.place``, on the typed IR.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.contexts import bind_event, place, supports
from rac_fw.domains.firmware.plan.behaviour.declare import declare
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN, constant
from rac_fw.domains.firmware.plan.behaviour.expr import ExprError
from rac_fw.domains.firmware.plan.behaviour.fields import CounterBytes, FillBytes, HexBytes, TextBytes, VarBytes
from rac_fw.domains.firmware.plan.behaviour.model import Behaviour, BootTrigger, EventTrigger, EveryTrigger
from rac_fw.domains.firmware.plan.behaviour.spec import step_spec
from rac_fw.domains.firmware.plan.behaviour.typecheck import Scope, compile_expr, convert, unit_fixes
from rac_fw.domains.firmware.plan.behaviour.types import BOOL, VType, parse_type
from rac_fw.domains.firmware.plan.behaviour.units import unit
from rac_fw.domains.firmware.plan.evidence import Path, relax, replace, violation
from rac_fw.domains.firmware.plan.paths import format_path
from rac_fw.domains.firmware.plan.registry import spec as op_spec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.model import Plan

#: Bytes a ``bytes`` variable holds when its ``size`` is not given.
DEFAULT_BYTES = 32
#: The prefix of the behaviour's runtime identifiers (helpers, the line buffer, the state). Plan names reach C
#: as ``rac_v<N>_<name>`` (variable N), ``rac_t<N>_<name>`` (trigger N), ``rac_s<N>_<name>`` (script N): the
#: number keeps them apart from the runtime, from each other and from the names derived from them (``_len``).
C_PREFIX = "rac_b_"

ROOT: Path = ["behaviour"]


@dataclass
class Compiler:
    """Compiles one behaviour for one plan, target and framework; ``evidence`` collects every problem."""

    behaviour: Behaviour
    plan: Plan
    target: Target
    framework: str
    evidence: list[Evidence] = field(default_factory=list)
    scope: Scope = field(default_factory=Scope)
    variables: dict[str, ir.Variable] = field(default_factory=dict)
    states: dict[str, ir.State] = field(default_factory=dict)
    outputs: dict[int, list[str]] = field(default_factory=dict)
    actions: list[tuple[int, str]] = field(default_factory=list)
    _ids: int = 0

    # --- evidence --------------------------------------------------------------------------------
    def error(self, code: str, message: str, path: Path, objects: Sequence[str] = (),
              relaxations: Sequence[Relaxation] = (), magnitudes: Sequence[Any] = ()) -> None:  # fmt: skip
        self.evidence.append(violation(code, message, path, objects, magnitudes, relaxations))

    def new_id(self) -> str:
        self._ids += 1
        return f"s{self._ids}"

    # --- expressions -------------------------------------------------------------------------------
    def expr(self, value: Any, path: Path, want: VType | None = None,
             unit_field: Path | None = None) -> ir.TExpr | None:
        """The typed expression at ``path`` (converted to ``want`` when given); None after an error.

        ``unit_field`` is where the receiving variable declares its unit: a value of that dimension it cannot
        hold exactly (``1500mV`` into a ``V`` variable) is then answered with declaring the finer unit there."""
        try:
            typed = compile_expr(value, self.scope)
            self._note_outputs(typed, path)
            return convert(typed, want, 0) if want is not None else typed
        except ExprError as exc:
            where = f" (column {exc.column})" if exc.column and isinstance(value, str) else ""
            fixes = [relax(f"use {s}", replace(path, str(value).replace(_bad_name(str(exc)), s, 1)))
                     for s in exc.suggestions if isinstance(value, str) and _bad_name(str(exc))]  # fmt: skip
            if exc.code == "E_BEHAVIOUR_UNIT" and isinstance(value, str):
                fixes += [relax(f"write {text}", replace(path, text)) for text in unit_fixes(value, self.scope, want)]
                finer = _finer_unit(value, self.scope, want)
                if finer is not None and unit_field is not None:
                    fixes.append(relax(f"declare it in {finer}", replace(unit_field, finer)))
            self.error(exc.code, f"{value!r}: {exc}{where}", path, [str(value)], fixes)
            return None

    def cond(self, value: Any, path: Path) -> ir.TExpr | None:
        """A condition: an expression of type bool."""
        typed = self.expr(value, path)
        if typed is not None and typed.type.kind != "bool":
            self.error("E_BEHAVIOUR_TYPE", f"{value!r} is a {typed.type.described()}, a condition is a bool "
                       f"(compare it: {value} != 0)", path, [str(value)],
                       [relax("compare it with zero", replace(path, f"({value}) != 0"))])  # fmt: skip
            return None
        return typed

    def constant(self, value: Any, path: Path, want: VType) -> Any:
        """The value of an expression that must not depend on run time (a filter threshold)."""
        typed = self.expr(value, path, want)
        if typed is None:
            return None
        result = constant(typed)
        if result is UNKNOWN:
            self.error("E_BEHAVIOUR_EXPR", f"{value!r} must be a constant here", path, [str(value)])
            return None
        return result

    def _note_outputs(self, typed: ir.TExpr, path: Path) -> None:
        for symbol in ir.refs(typed):
            if symbol.kind == "output" and symbol.op_index is not None:
                used = self.outputs.setdefault(symbol.op_index, [])
                name = symbol.name.split(".", 1)[1]
                if name not in used and supports(self, symbol.op_index, f"output:{name}", path):
                    used.append(name)

    # --- blocks, names ------------------------------------------------------------------------------
    def body(self, steps: Sequence[Any], path: Path) -> list[ir.Stmt]:
        compiled = []
        for index, step in enumerate(steps):
            kind, value = _key(step)
            stmt = step_spec(kind).compile(self, value, [*path, index, kind])
            stmt.id = stmt.id or self.new_id()
            compiled.append(stmt)
        return compiled

    @contextmanager
    def scoped(self, symbols: Sequence[ir.Symbol]) -> Iterator[None]:
        saved = self.scope
        self.scope = saved.child(symbols)
        try:
            yield
        finally:
            self.scope = saved

    def duration_ms(self, text: str, path: Path) -> int | None:
        """A duration in whole milliseconds (sub-millisecond durations are refused with the nearest)."""
        number = int(text.rstrip("smu"))
        if text.endswith("us"):
            if number % 1000:
                ms = max(1, round(number / 1000))
                self.error("E_BEHAVIOUR_DURATION", f"{text} is not a whole number of milliseconds, the resolution "
                           "of every framework's sleep", path, [text], [relax(f"use {ms}ms", replace(path, f"{ms}ms"))])
                return None  # fmt: skip
            return number // 1000
        return number * 1000 if text.endswith("s") and not text.endswith("ms") else number

    def variable(self, name: str, path: Path, keys: dict[str, Any] | None = None) -> ir.Variable | None:
        """The variable ``name`` (E_BEHAVIOUR_NAME with the near names otherwise). ``keys``: the name is a key of
        that mapping at ``path[:-1]`` (a ``set``), so a fix renames the key in place, keeping the order."""
        found = self.variables.get(name)
        if found is None:
            near = difflib.get_close_matches(name, list(self.variables), n=3, cutoff=0.6)
            fixes = [relax(f"use {n}", replace(path, n)) for n in near] if keys is None else [
                relax(f"use {n}", replace(path[:-1], {n if k == name else k: _plain(v) for k, v in keys.items()}))
                for n in near if n not in keys]  # fmt: skip
            self.error("E_BEHAVIOUR_NAME", f"no variable is named {name!r} (variables: "
                       f"{', '.join(self.variables) or 'none'})", path, [name], fixes)  # fmt: skip
        return found

    def script(self, name: str, path: Path) -> bool:
        names = [s.name for s in self.behaviour.scripts]
        if name in names:
            return True
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        self.error("E_BEHAVIOUR_NAME", f"no script is named {name!r} (scripts: {', '.join(names) or 'none'})",
                   path, [name], [relax(f"use {n}", replace(path, n)) for n in near])  # fmt: skip
        return False

    def state(self, name: str, path: Path) -> ir.State | None:
        found = self.states.get(name)
        if found is None:
            near = difflib.get_close_matches(name, list(self.states), n=3, cutoff=0.6)
            self.error("E_BEHAVIOUR_NAME", f"no state is named {name!r} (states: "
                       f"{', '.join(self.states) or 'none: declare machine.states'})", path, [name],
                       [relax(f"use {n}", replace(path, n)) for n in near])  # fmt: skip
        return found

    def payload(self, value: Any, path: Path) -> tuple[list[int] | None, ir.Variable | None]:
        """Literal bytes, or the bytes variable a ``{var: …}`` payload names."""
        if isinstance(value, HexBytes):
            return list(bytes.fromhex(value.hex.replace(" ", ""))), None
        if isinstance(value, TextBytes):
            return list(value.text.encode("utf-8")), None
        if isinstance(value, FillBytes):
            return [value.fill] * value.size, None
        if isinstance(value, CounterBytes):
            return [(value.counter + i) & 0xFF for i in range(value.size)], None
        if isinstance(value, VarBytes):
            var = self.variable(value.var, [*path, "var"])
            if var is not None and var.type.kind != "bytes":
                self.error("E_BEHAVIOUR_TYPE", f"{value.var} is a {var.type.described()}, a payload is bytes",
                           [*path, "var"], [value.var])  # fmt: skip
                return None, None
            return None, var
        return None, None

    def op_named(self, name: str, path: Path) -> tuple[int, Any] | None:
        for index, op in enumerate(self.plan.operations):
            if op.name == name:
                return index, op
        named = [o.name for o in self.plan.operations if o.name]
        near = difflib.get_close_matches(name, named, n=3, cutoff=0.5)
        self.error("E_BEHAVIOUR_NAME", f"no operation is named {name!r} (named operations: "
                   f"{', '.join(named) or 'none: give the operation a name'})", path, [name],
                   [relax(f"use {n}", replace(path, n)) for n in near])  # fmt: skip
        return None


def _finer_unit(value: str, scope: Scope, want: VType | None) -> str | None:
    """The unit of ``value`` when it is of ``want``'s dimension but finer (what the receiver should declare)."""
    try:
        typed = compile_expr(value, scope)
    except ExprError:
        return None
    got = typed.type.unit
    if want is None or want.unit is None or got is None or got.dimension != want.unit.dimension:
        return None
    return got.symbol if got.exponent < want.unit.exponent else None


def _plain(value: Any) -> Any:
    """A plan value as plan data again (a payload model as its mapping)."""
    return value.model_dump(by_alias=True) if hasattr(value, "model_dump") else value


def _key(step: Any) -> tuple[str, Any]:
    """The step's kind and its value (the one field of its model)."""
    field_name, info = next(iter(type(step).model_fields.items()))
    return str(info.alias or field_name), getattr(step, field_name)


def _bad_name(message: str) -> str:
    start = message.find("'")
    end = message.find("'", start + 1)
    return message[start + 1 : end] if 0 <= start < end else ""


# --- the whole block ----------------------------------------------------------------------------------


def output_symbols(plan: Plan) -> list[ir.Symbol]:
    """Every ``<op name>.<output>`` a behaviour of ``plan`` may read."""
    found = []
    for index, op in enumerate(plan.operations):
        if op.name is None:
            continue
        for name, out in op_spec(op.op).outputs.items():
            t = parse_type(out.type, out.size(op) if out.size else None).with_unit(unit(out.unit))
            found.append(ir.Symbol("output", f"{op.name}.{name}", f"{C_PREFIX}out_{index}_{name}", t,
                                   op_index=index))  # fmt: skip
    return found


def _variables(c: Compiler) -> None:
    for index, decl in enumerate(c.behaviour.vars):
        path: Path = [*ROOT, "vars", index]
        if decl.name in c.variables:
            c.error("E_BEHAVIOUR_NAME", f"variable {decl.name!r} is declared twice", [*path, "name"], [decl.name])
            continue
        t = parse_type(decl.type, (decl.size or DEFAULT_BYTES) if decl.type == "bytes" else None)
        t = t.with_unit(unit(decl.unit))
        var = ir.Variable(decl.name, f"rac_v{index}_{decl.name}", t, persist=decl.persist, guard=decl.guard,
                          path=format_path(path))  # fmt: skip
        declare(c, decl, var, path)
        c.variables[decl.name] = var
    symbols = [ir.Symbol("var", v.name, v.c, v.type) for v in c.variables.values()]
    symbols += output_symbols(c.plan)
    if c.behaviour.machine is not None:
        state_type = VType("state", 8, False)
        symbols.append(ir.Symbol("state", "state", f"{C_PREFIX}state", state_type))
        for number, state in enumerate(c.behaviour.machine.states):
            symbols.append(ir.Symbol("state_const", state.name, f"RAC_B_STATE_{state.name.upper()}", state_type,
                                     number))  # fmt: skip
    c.scope = Scope({s.name: s for s in symbols}, {v.name for v in c.variables.values() if v.window})


def _machine(c: Compiler) -> tuple[list[ir.State], str | None]:
    machine = c.behaviour.machine
    if machine is None:
        return [], None
    states = []
    for number, decl in enumerate(machine.states):
        if decl.name in c.states:
            c.error("E_BEHAVIOUR_NAME", f"state {decl.name!r} is declared twice",
                    [*ROOT, "machine", "states", number, "name"], [decl.name])  # fmt: skip
            continue
        state = ir.State(decl.name, number, f"RAC_B_STATE_{decl.name.upper()}")
        c.states[decl.name] = state
        states.append(state)
    for number, decl in enumerate(machine.states):
        known = c.states.get(decl.name)
        if known is not None:
            known.entry = c.body(decl.entry, [*ROOT, "machine", "states", number, "entry"])
            known.exit = c.body(decl.exit, [*ROOT, "machine", "states", number, "exit"])
    if machine.initial not in c.states:
        c.state(machine.initial, [*ROOT, "machine", "initial"])
    return states, machine.initial


def _trigger(c: Compiler, index: int, decl: Any) -> ir.Trigger | None:
    path: Path = [*ROOT, "triggers", index]
    name = decl.name or f"t{index}"
    kind: ir.TriggerKind = (
        "boot" if isinstance(decl, BootTrigger) else "every" if isinstance(decl, EveryTrigger)
        else "event" if isinstance(decl, EventTrigger) else "condition"
    )  # fmt: skip
    trigger = ir.Trigger(kind, name, f"rac_t{index}_{name}", format_path(path), [])
    if not isinstance(decl, BootTrigger):
        trigger.times = decl.times
        if decl.in_state is not None and c.state(decl.in_state, [*path, "in_state"]) is not None:
            trigger.in_state = decl.in_state
    if isinstance(decl, EveryTrigger):
        trigger.period_ms = c.duration_ms(decl.every, [*path, "every"])
    elif isinstance(decl, EventTrigger):
        bind_event(c, trigger, decl, path)
    elif kind == "condition":
        trigger.condition = c.cond(decl.when, [*path, "when"])
        trigger.poll_ms = c.duration_ms(decl.poll, [*path, "poll"])
    trigger.body = c.body(decl.do, [*path, "do"])
    return trigger


def compile_behaviour(behaviour: Behaviour, plan: Plan, target: Target, framework: str) -> tuple[
        ir.Program | None, list[Evidence]]:  # fmt: skip
    """The IR of ``behaviour`` (None when anything failed) and the evidence against it."""
    c = Compiler(behaviour, plan, target, framework)
    _variables(c)
    states, initial = _machine(c)
    names = [t.name for t in behaviour.triggers if t.name] + [s.name for s in behaviour.scripts]
    for name in sorted({n for n in names if names.count(n) > 1}):
        c.error("E_BEHAVIOUR_NAME", f"{name!r} names two triggers or scripts", [*ROOT, "triggers"], [name])
    triggers = [t for i, d in enumerate(behaviour.triggers) if (t := _trigger(c, i, d)) is not None]
    scripts = []
    for index, decl in enumerate(behaviour.scripts):
        path: Path = [*ROOT, "scripts", index]
        script = ir.Trigger("script", decl.name, f"rac_s{index}_{decl.name}", format_path(path),
                            c.body(decl.do, [*path, "do"]), mode=decl.mode,
                            queue=decl.queue or (4 if decl.mode == "queued" else 1))  # fmt: skip
        if decl.queue is not None and decl.mode != "queued":
            c.error("E_BEHAVIOUR_FIELD", f"script {decl.name} keeps no queue in {decl.mode} mode", [*path, "queue"],
                    [decl.name], [relax("queue its starts (mode: queued)", replace([*path, "mode"], "queued"))])
        scripts.append(script)
    started = {s.data["script"] for t in [*triggers, *scripts] for s in ir.walk(t.body) if s.kind == "start"}
    started |= {s.data["script"] for st in states for s in ir.walk(st.entry + st.exit) if s.kind == "start"}
    for script in scripts:
        script.started = script.name in started
    from rac_fw.domains.firmware.plan.behaviour.steps.print import line_bytes

    program = ir.Program(list(c.variables.values()), triggers, scripts, states, initial,
                         line_bytes(triggers + scripts, states), c.outputs, c.actions)  # fmt: skip
    if c.evidence:
        return None, c.evidence
    place(c, program)
    return (None if c.evidence else program), c.evidence


__all__ = ["BOOL", "Compiler", "compile_behaviour", "output_symbols"]
