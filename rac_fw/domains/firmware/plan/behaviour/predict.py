"""The trace predictor: run a behaviour's IR in Python, from the plan alone, and record what it prints.

The predictor follows the semantics the C renderings implement (``docs/BEHAVIOUR.md``): machine entry and
boot steps first; then the dispatcher runs, one at a time, whichever trigger is due earliest (ties in
declaration order): an ``every`` trigger at its schedule, a deferred event at the time it was raised, a
started script at the time it was started, a condition trigger at its polls. Arithmetic is
``evaluate``'s, exact to the bit. Values the plan does not determine (sensor readings, received bytes)
are unknown: a line printing one becomes a regex, a branch on one becomes a :class:`Choice`, a loop whose
count depends on one a :class:`Repeat`; where even that cannot be said the trace becomes :class:`Open`.
Events from outside (a button, a received line) are not exercised: the receipt says which.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.evaluate import UNKNOWN, evaluate, to_type
from rac_fw.domains.firmware.plan.behaviour.functions import FUNCTIONS
from rac_fw.domains.firmware.plan.behaviour.spec import step_spec
from rac_fw.domains.firmware.plan.behaviour.trace import Choice, Item, Line, Open, Repeat, coalesce, exact
from rac_fw.domains.firmware.plan.behaviour.types import f32, trunc_div, wrap
from rac_fw.domains.firmware.plan.registry import spec as op_spec

#: Iterations of ``while … max: forever`` the predictor follows before it calls the rest open.
LOOP_CAP = 10_000
#: Simulated time the dispatcher follows (a condition that never comes true ends the prediction there).
HORIZON_MS = 600_000
#: Statements the predictor executes at most (a plan whose run is longer is predicted as far as that).
STEP_BUDGET = 500_000


class ExitBehaviour(Exception):
    def __init__(self, code: int):
        self.code = code


class ResetChip(Exception):
    """``reset: chip``: the chip boots again (persisted variables keep their values)."""


class StopTrigger(Exception):
    """``stop: self``: the running trigger ends (for good)."""


class OpenTrace(Exception):
    """The rest of the run cannot be predicted; ``why`` says so in the trace."""

    def __init__(self, why: str):
        self.why = why


@dataclass
class _Run:
    """What the dispatcher knows of one trigger or script."""

    next_due: int | None = None
    runs: int = 0
    stopped: bool = False
    pending: list[int] = field(default_factory=list)
    last: bool = False


@dataclass
class Machine:
    """The state of one predicted run."""

    program: ir.Program
    plan: Any
    values: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    """Filter state per variable (window samples, last accepted time)."""
    loops: dict[str, Any] = field(default_factory=dict)
    items: list[Item] = field(default_factory=list)
    time: int = 0
    state: str | None = None
    runs: dict[str, _Run] = field(default_factory=dict)
    current: str | None = None
    steps: int = 0
    notes: list[str] = field(default_factory=list)
    loop_cap: int = LOOP_CAP

    @property
    def state_names(self) -> list[str]:
        return [s.name for s in self.program.states]

    # --- values ---------------------------------------------------------------------------------------
    def lookup(self, symbol: ir.Symbol, whole: bool) -> Any:
        if symbol.kind == "loop":
            return self.loops.get(symbol.c, UNKNOWN)
        if symbol.kind == "state":
            return UNKNOWN if self.state is None else self.state_names.index(self.state)
        if symbol.kind == "state_const":
            return symbol.value
        if symbol.kind == "output":
            index, name = symbol.op_index, symbol.name.split(".", 1)[1]
            return self.output(index, name) if index is not None else UNKNOWN
        if whole:
            return list(self.memory.get(symbol.name, {}).get("window", []))
        return self.var_value(symbol.name)

    def var_value(self, name: str) -> Any:
        return self.values.get(name, UNKNOWN)

    def value(self, e: ir.TExpr) -> Any:
        return evaluate(e, self.lookup)

    def truth(self, e: ir.TExpr) -> Any:
        return self.value(e)

    def output(self, index: int | None, name: str) -> Any:
        if index is None:
            return UNKNOWN
        op = self.plan.operations[index]
        out = op_spec(op.op).outputs.get(name)
        if out is None or out.determined is None:
            return UNKNOWN
        return out.determined(op)

    def action_fails(self, index: int, action: str) -> bool:
        return op_spec(self.plan.operations[index].op).actions[action].fails

    @contextmanager
    def binding(self, symbol: ir.Symbol | None, value: Any) -> Iterator[None]:
        if symbol is None:
            yield
            return
        saved = self.loops.get(symbol.c, UNKNOWN)
        self.loops[symbol.c] = value
        try:
            yield
        finally:
            self.loops[symbol.c] = saved

    def assign(self, name: str, value: Any) -> None:
        var = self.program.variable(name)
        if var is None:
            return
        if var.filter is None and not var.window:
            self.values[name] = value if value is UNKNOWN or var.type.kind == "bytes" else to_type(value, var.type)
            return
        self.values[name] = _filtered(self, var, value)

    # --- output and time --------------------------------------------------------------------------------
    def emit(self, line: Line) -> None:
        self.items.append(line)

    def open(self, why: str) -> None:
        raise OpenTrace(why)

    def sleep(self, ms: int) -> None:
        self.time += ms

    def wait_for(self, cond: ir.TExpr, timeout_ms: int | None, path: str) -> bool:
        """Whether ``cond`` holds before the timeout (time passes to the timeout when it does not).

        Only the behaviour's own steps change its variables here, and they wait too; so a condition false
        now stays false: the wait times out (or, without a timeout, waits forever)."""
        truth = self.truth(cond)
        if truth is True:
            return True
        if truth is UNKNOWN:
            raise OpenTrace(f"{path} waits for a value the plan does not determine")
        if timeout_ms is None:
            raise OpenTrace(f"{path} waits forever for a condition nothing in the plan makes true")
        self.time += timeout_ms
        return False

    # --- control ---------------------------------------------------------------------------------------
    def run(self, stmts: list[ir.Stmt]) -> None:
        for stmt in stmts:
            self.steps += 1
            if self.steps > STEP_BUDGET:
                raise OpenTrace(f"the run is longer than the {STEP_BUDGET} steps the predictor follows")
            step_spec(stmt.kind).predict(self, stmt)

    def branch(self, options: list[list[ir.Stmt]]) -> None:
        """Run each option from a copy of this state: the trace becomes a choice, differing values unknown."""
        forks = []
        for option in options:
            fork = self.fork()
            try:
                fork.run(option)
            except (ExitBehaviour, StopTrigger, OpenTrace, ResetChip):
                raise OpenTrace("whether the run ends, stops or resets here depends on a value the plan does "
                                "not determine") from None  # fmt: skip
            forks.append(fork)
        self.join(forks)

    def loop_unknown(self, body: list[ir.Stmt], lo: int, hi: int, index: ir.Symbol | None,
                     cond: ir.TExpr | None = None) -> None:  # fmt: skip
        """A loop whose count the plan does not determine: its body's trace repeated between lo and hi times."""
        fork = self.fork()
        with fork.binding(index, UNKNOWN):
            try:
                fork.run(body)
            except (ExitBehaviour, StopTrigger, OpenTrace, ResetChip):
                raise OpenTrace("a loop whose count depends on run time ends the run") from None
        if fork.time != self.time:
            raise OpenTrace("a loop whose count depends on run time waits: the timing after it is open")
        written = {n for n, v in fork.values.items() if self.values.get(n, UNKNOWN) != v}
        for name in written:
            self.values[name] = UNKNOWN
        if fork.items:
            self.items.append(Repeat(tuple(coalesce(fork.items)), lo, hi))

    def fork(self) -> Machine:
        clone = copy.copy(self)
        clone.values = copy.deepcopy(self.values)
        clone.memory = copy.deepcopy(self.memory)
        clone.loops = dict(self.loops)
        clone.runs = copy.deepcopy(self.runs)
        clone.items = []
        return clone

    def join(self, forks: list[Machine]) -> None:
        traces = [tuple(coalesce(f.items)) for f in forks]
        if len(set(traces)) == 1:
            self.items.extend(traces[0])
        else:
            self.items.append(Choice(tuple(traces)))
        names = set().union(*(f.values for f in forks))
        for name in names:
            seen = [f.values.get(name, UNKNOWN) for f in forks]
            self.values[name] = seen[0] if all(v == seen[0] for v in seen) else UNKNOWN
        if len({f.time for f in forks}) > 1 or len({f.state for f in forks}) > 1:
            raise OpenTrace("branches the plan cannot decide take different times or states")
        self.time = forks[0].time
        self.steps = max(f.steps for f in forks)
        self.runs = forks[0].runs

    def exit(self, code: int) -> None:
        raise ExitBehaviour(code)

    def reset(self) -> None:
        raise ResetChip()

    def stop(self, name: str) -> None:
        if name == "self" or name == self.current:
            raise StopTrigger()
        self.runs.setdefault(name, _Run()).stopped = True

    def goto(self, name: str) -> None:
        states = {s.name: s for s in self.program.states}
        if self.state is not None:
            self.run(states[self.state].exit)
        self.state = name
        self.run(states[name].entry)

    def call(self, name: str) -> None:
        script = next(s for s in self.program.scripts if s.name == name)
        with contextmanager_current(self, name), suppress(StopTrigger):
            self.run(script.body)

    def start(self, name: str) -> None:
        script = next(s for s in self.program.scripts if s.name == name)
        run = self.runs.setdefault(name, _Run())
        if script.mode == "queued":
            if len(run.pending) < script.queue:
                run.pending.append(self.time)
        elif not run.pending:
            run.pending.append(self.time)

    def act(self, index: int, stmt: ir.Stmt) -> None:
        op = self.plan.operations[index]
        action = op_spec(op.op).actions[stmt.data["action"]]
        if action.prints is not None:
            args = {name: self.value(stmt.exprs[name]) for name in stmt.exprs}
            for pattern in action.prints(op, args):
                self.emit(Line(pattern, stmt.path))
        for event in action.raises:
            self.raise_event(index, event)

    def raise_event(self, index: int, event: str) -> None:
        for trigger in self.program.triggers:
            if trigger.kind != "event" or trigger.source_op != index or trigger.event != event:
                continue
            run = self.runs.setdefault(trigger.name, _Run())
            if run.stopped or (trigger.times is not None and run.runs >= trigger.times):
                continue
            if trigger.deferred:
                if len(run.pending) < trigger.queue:
                    run.pending.append(self.time)
                continue
            if trigger.in_state is not None and trigger.in_state != self.state:
                continue
            run.runs += 1
            with contextmanager_current(self, trigger.name):
                try:
                    self.run(trigger.body)
                except StopTrigger:
                    run.stopped = True


@contextmanager
def contextmanager_current(m: Machine, name: str) -> Iterator[None]:
    saved = m.current
    m.current = name
    try:
        yield
    finally:
        m.current = saved


def _filtered(m: Machine, var: ir.Variable, sample: Any) -> Any:
    """The variable's value after ``sample`` went through its filter or window (the C helpers' arithmetic)."""
    mem = m.memory.setdefault(var.name, {"window": [], "first": True, "last_ms": 0})
    t = var.type
    f = var.filter or {}
    kind = f.get("kind")
    if sample is not UNKNOWN and f:
        sample = to_type(sample, f["input"])
    current = m.values.get(var.name, var.init if var.init is not None else UNKNOWN)
    if var.window:
        mem["window"] = (mem["window"] + [sample])[-var.window :]
        samples = mem["window"]
        if kind in ("moving_average", "median"):
            if UNKNOWN in samples:
                return UNKNOWN
            return to_type(FUNCTIONS["mean" if kind == "moving_average" else "median"].evaluate([samples], t), t)
        return sample
    if sample is UNKNOWN:
        return UNKNOWN
    first = mem["first"]
    mem["first"] = False
    if kind == "exponential":
        if first or current is UNKNOWN:
            return to_type(sample, t)
        if t.kind == "float":
            step = f32(f32(sample - current) * f32(f["alpha_pct"] / 100.0))
            return f32(current + step)
        return wrap(current + trunc_div((sample - current) * f["alpha_pct"], 100), t)
    if kind == "delta":
        change = abs(f32(sample - current) if t.kind == "float" and current is not UNKNOWN else
                     (sample - current if current is not UNKNOWN else 0))  # fmt: skip
        if first or current is UNKNOWN or change >= f["min_change"]:
            return to_type(sample, t)
        return current
    if kind == "throttle":
        if first or m.time - mem["last_ms"] >= f["interval_ms"]:
            mem["last_ms"] = m.time
            return to_type(sample, t)
        return current
    if kind == "hysteresis":
        if sample >= f["high"]:
            return True
        if sample <= f["low"]:
            return False
        return False if current is UNKNOWN else current
    if kind == "calibrate":
        (r0, r1), (t0, t1) = f["raw"], f["to"]
        if t.kind == "float":
            scaled = f32(f32(f32(sample - r0) * f32(t1 - t0)) / f32(r1 - r0))
            return f32(t0 + scaled)
        return wrap(t0 + trunc_div((sample - r0) * (t1 - t0), r1 - r0), t)
    return to_type(sample, t)


# --- the dispatcher ---------------------------------------------------------------------------------------


@dataclass
class Prediction:
    """The predicted console lines of the behaviour (between the op lines and ``rac: done``)."""

    items: list[Item]
    ends: str
    """``done``, ``exit N``, ``forever`` (done printed after boot), or ``open``."""
    notes: list[str]
    exit_code: int = 0
    elapsed_ms: int = 0
    """Predicted time from the behaviour's start to its last predicted line (over resets, their boots excluded):
    what a test that waits for the lines must allow."""


def done_line(code: int) -> str:
    """What the firmware prints when the behaviour ends."""
    return "rac: done" if code == 0 else f"rac: done exit={code}"


def _initial(m: Machine) -> None:
    for var in m.program.variables:
        if var.init is not None and not var.filter:
            m.values[var.name] = list(var.init) if isinstance(var.init, list) else var.init
        if var.filter and var.filter["kind"] == "hysteresis" and isinstance(var.init, bool):
            m.values[var.name] = var.init


def _candidates(m: Machine, start: int) -> list[tuple[int, int, ir.Trigger]]:
    found = []
    for order, trigger in enumerate(m.program.all_triggers()):
        run = m.runs.setdefault(trigger.name, _Run())
        if run.stopped or trigger.kind == "boot":
            continue
        if trigger.kind != "script" and trigger.times is not None and run.runs >= trigger.times:
            continue
        if trigger.kind == "every" and trigger.period_ms:
            if run.next_due is None:
                run.next_due = start + trigger.period_ms
            found.append((run.next_due, order, trigger))
        elif trigger.kind == "condition" and trigger.poll_ms:
            if run.next_due is None:
                run.next_due = start + trigger.poll_ms
            found.append((run.next_due, order, trigger))
        elif run.pending:
            found.append((run.pending[0], order, trigger))
    return found


def _dispatch(m: Machine, trigger: ir.Trigger, due: int) -> None:
    run = m.runs[trigger.name]
    m.time = max(m.time, due)
    if trigger.kind in ("every", "condition"):
        run.next_due = due + (trigger.period_ms or trigger.poll_ms or 1)
    else:
        run.pending.pop(0)
    if trigger.in_state is not None and trigger.in_state != m.state:
        return
    if trigger.kind == "condition" and trigger.condition is not None:
        truth = m.truth(trigger.condition)
        if truth is UNKNOWN:
            raise OpenTrace(f"{trigger.name}'s condition depends on a value the plan does not determine")
        fire = truth and not run.last
        run.last = bool(truth)
        if not fire:
            return
    run.runs += 1
    with contextmanager_current(m, trigger.name):
        try:
            m.run(trigger.body)
        except StopTrigger:
            run.stopped = trigger.kind != "script"  # a script's `stop: self` ends this run, not the script


def _external(m: Machine) -> list[str]:
    """The event triggers that wait for events from outside (not exercised by the prediction)."""
    raised = {(i, e) for i, a in m.program.actions for e in op_spec(m.plan.operations[i].op).actions[a].raises}
    return [t.name for t in m.program.triggers if t.kind == "event" and (t.source_op, t.event) not in raised]


#: Resets the predictor follows (a behaviour that keeps resetting is predicted as far as that).
MAX_RESETS = 16


def predict(program: ir.Program, plan: Any, boot: list[Item] | None = None) -> Prediction:
    """The behaviour's predicted lines, how it ends, and what the prediction leaves out.

    ``boot`` is what the chip prints from reset to the behaviour's start (the boot line and the operations'
    lines): a ``reset: chip`` step prints it again, and the behaviour restarts with its persisted values."""
    kept: dict[str, Any] = {}
    items: list[Item] = []
    notes: list[str] = []
    elapsed = 0
    for _ in range(MAX_RESETS + 1):
        m = Machine(program, plan)
        _initial(m)
        m.values.update(kept)
        try:
            result = _run(m, program, notes)
        except ResetChip:
            elapsed += m.time
            items += m.items + list(boot or [])
            kept = {v.name: m.values[v.name] for v in program.variables if v.persist and v.name in m.values}
            continue
        return Prediction(coalesce(items + result.items), result.ends, notes or result.notes, result.exit_code,
                          elapsed + m.time)
    return Prediction(coalesce([*items, Open(f"the chip resets more than {MAX_RESETS} times")]), "open", notes,
                      elapsed_ms=elapsed)


def _run(m: Machine, program: ir.Program, notes: list[str]) -> Prediction:
    external = _external(m)
    notes[:] = [f"{name} waits for events from outside the chip: not exercised in this prediction" for name in external]
    try:
        if program.initial is not None:
            m.goto(program.initial)
        for trigger in program.triggers:
            if trigger.kind == "boot":
                with contextmanager_current(m, trigger.name), suppress(StopTrigger):
                    m.run(trigger.body)
        if not program.finite:
            m.emit(exact(done_line(0), "behaviour"))
            return Prediction(coalesce(m.items), "forever", notes)
        start = m.time
        while True:
            found = _candidates(m, start)
            if not found:
                break
            due, _, trigger = min(found, key=lambda x: (x[0], x[1]))
            if due - start > HORIZON_MS:
                raise OpenTrace(f"{trigger.name} is still waiting after {HORIZON_MS // 1000} s of predicted time")
            _dispatch(m, trigger, due)
        # An event trigger short of its `times` keeps the behaviour alive (the C dispatcher waits for it): for
        # events from outside the chip the rest is open; for events only the behaviour raises, it never ends.
        waiting = [t.name for t in program.triggers if t.kind == "event" and t.times is not None
                   and m.runs.get(t.name, _Run()).runs < t.times and not m.runs.get(t.name, _Run()).stopped]
        outside = [name for name in waiting if name in external]
        if outside:  # fmt: skip
            m.items.append(Open(f"{', '.join(outside)} wait(s) for events from outside the chip"))
            return Prediction(coalesce(m.items), "open", notes)
        if waiting:
            m.items.append(Open(f"{', '.join(waiting)} wait(s) for more events than the behaviour raises: the run "
                                "does not end (lower its times)"))
            return Prediction(coalesce(m.items), "open", notes)
        m.emit(exact(done_line(0), "behaviour"))
        return Prediction(coalesce(m.items), "done", notes)
    except ExitBehaviour as stop:
        m.emit(exact(done_line(stop.code), "behaviour"))
        return Prediction(coalesce(m.items), f"exit {stop.code}", notes, stop.code)
    except OpenTrace as unknown:
        m.items.append(Open(unknown.why))
        return Prediction(coalesce(m.items), "open", notes)
