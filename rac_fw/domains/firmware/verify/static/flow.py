"""Which calls a program makes, and what has happened on every path before each: the behaviour behind the C.

Text is not behaviour: a call inside ``if (0)``, after a ``return``, in a function nothing calls, in a
comment or a string literal is not made. This module walks the program model (:mod:`.model`) from its
*entry points* — ``main``/``app_main``, interrupt handlers and callbacks (:func:`.isr.isr_functions`),
and every function whose address the live code or a file-scope initializer takes (threads, work items,
vector tables) — and keeps, for every call the program can make, the set of calls made on *every* path
from an entry point before it (a must-analysis: branches meet by intersection, a loop body may not run,
``goto``/``break``/``return`` end their paths, a local function that never returns — ``Error_Handler``'s
``for (;;)`` — ends the paths through it, and a local call adds what its body makes on every path).

It also evaluates constant expressions the way the compiler would for the checks that need a value:
literals, the artifact's own macros, ``sizeof`` of declared objects and types, ``ARRAY_SIZE``, and
variables whose one value is their constant initializer; anything else is *unknown* (None), never guessed.

Deliberate limits: preprocessor conditions are evaluated only when constant (``#if 0``); a path through a
function pointer is not followed (the pointee is an entry of its own); loops are not unrolled (a call in a
loop body has happened on no path after the loop). Used by the task checks Φ
(:mod:`rac_fw.domains.firmware.tasks.checks`); independent of any lowering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from tree_sitter import Node

from rac_fw.domains.firmware.verify.sdk import Rules
from rac_fw.domains.firmware.verify.static.isr import isr_functions
from rac_fw.domains.firmware.verify.static.model import Call, FunctionDef, Program, Unit, object_key, strip_expression
from rac_fw.domains.firmware.verify.static.preprocess import c_parser


@dataclass(frozen=True)
class Facts:
    """What holds at a point of a function on every path reaching it: the calls made, and calls made
    under a guard — ``if (err == 0) { err = write(); }`` leaves ``write`` guarded by ``err==0``: wherever
    ``err == 0`` is known to hold later (and ``err`` was not written since outside the guarded branch),
    ``write`` was made. This is what makes the idiom ``if (!err) a(); if (!err) b();`` order ``a`` before
    ``b`` on every feasible path."""

    events: frozenset[str] = frozenset()
    guarded: frozenset[tuple[str, str]] = frozenset()

    def add(self, names: frozenset[str] | set[str]) -> Facts:
        return Facts(self.events | names, self.guarded)

    def assume(self, guards: list[str]) -> Facts:
        """The facts once each of ``guards`` (normalized condition texts) is known to hold."""
        promoted = {event for guard, event in self.guarded if guard in guards}
        return Facts(self.events | promoted, self.guarded) if promoted else self

    def forget(self, variable: str) -> Facts:
        """``variable`` was written: guards that read it no longer say anything."""
        word = re.compile(rf"\b{re.escape(variable)}\b")
        kept = frozenset(g for g in self.guarded if not word.search(g[0]))
        return self if len(kept) == len(self.guarded) else Facts(self.events, kept)


State = Facts | None
"""None: no path reaches this point."""


#: Entry points by name, in every framework.
ENTRY_NAMES = ("main", "app_main")

#: Functions the SDK or the C runtime calls by their name (weak hooks an application overrides): HAL's
#: MSP initialisers (HAL_UART_Init calls HAL_UART_MspInit), newlib's I/O retargeting, FreeRTOS hooks,
#: CMSIS start-up.
HOOK_NAMES = re.compile(r"^(HAL_\w*Msp(De)?Init|_write|_read|__io_putchar|__io_getchar|_sbrk|vApplication\w+Hook"
                        r"|SystemInit|Reset_Handler)$")

#: SDK calls after which no path continues.
NO_RETURN = frozenset({"abort", "exit", "_exit", "__builtin_unreachable", "k_panic", "k_oops", "sys_reboot",
                       "esp_restart", "NVIC_SystemReset", "HAL_NVIC_SystemReset", "__NVIC_SystemReset"})

#: Byte sizes of the scalar types a buffer is declared with (32-bit targets: pointers and ``long`` are 4).
TYPE_BYTES = {"char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "_Bool": 1, "int8_t": 1, "uint8_t": 1,
              "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "int": 4, "unsigned": 4,
              "unsigned int": 4, "long": 4, "unsigned long": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
              "size_t": 4, "uintptr_t": 4, "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8,
              "double": 8}

_QUALIFIERS = re.compile(r"\b(const|volatile|static|register|extern|_Atomic)\b")
_INTEGER = re.compile(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)$")


def _meet(a: State, b: State) -> State:
    if a is None:
        return b
    if b is None:
        return a
    return Facts(a.events & b.events, a.guarded & b.guarded)


def _pure(node: Node) -> bool:
    """An expression without calls or writes (its truth can only change when a variable it reads does)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("call_expression", "assignment_expression", "update_expression"):
            return False
        stack.extend(current.named_children)
    return True


#: How a result variable is tested for success (``ok``) or failure, as normalized condition texts.
_SUCCESS_TESTS = ("{v}==0", "{v}>=0", "{v}==ESP_OK", "{v}==HAL_OK", "!{v}", "{v}==pdPASS", "{v}==pdTRUE")
_FAILURE_TESTS = ("{v}<0", "{v}!=0", "{v}!=ESP_OK", "{v}!=HAL_OK", "{v}", "{v}!=pdPASS", "{v}!=pdTRUE")
_TESTED = re.compile(r"^!?([A-Za-z_]\w*)(?:(?:==|!=|<|>=)(?:0|ESP_OK|HAL_OK|pdPASS|pdTRUE))?$")


def _checked_ok(guards: list[str], negated: bool) -> list[str]:
    """The ``ok:v`` facts a branch learns: conditions testing a result for success (then-branch), or for
    failure (``negated``: the else-branch, or the path after ``if (err < 0) { return …; }``)."""
    out = []
    for guard in guards:
        match = _TESTED.match(guard)
        if match is None:
            continue
        variable = match.group(1)
        tests = _FAILURE_TESTS if negated else _SUCCESS_TESTS
        if guard in (t.format(v=variable) for t in tests):
            out.append(f"ok:{variable}")
    return out


def _conjuncts(node: Node | None) -> list[str]:
    """Normalized texts of the pure conjuncts of a condition (``(a == 0 && !b)`` → ``a==0``, ``!b``)."""
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node is None:
        return []
    operator = node.child_by_field_name("operator") if node.type == "binary_expression" else None
    if operator is not None and operator.type == "&&":
        return _conjuncts(node.child_by_field_name("left")) + _conjuncts(node.child_by_field_name("right"))
    return [re.sub(r"\s+", "", (node.text or b"").decode(errors="replace"))] if _pure(node) else []


def occurrence(call: Call) -> str:
    """The event token of one call site (besides its name): ``Reached.before`` holds both, so a check can ask
    whether *this* earlier call — with its arguments — was made."""
    return f"{call.name}#{id(call)}"


def _key(unit: Unit, node: Node) -> tuple[str, int, int]:
    return unit.path, node.start_byte, node.end_byte


@dataclass(frozen=True)
class Reached:
    """A call the program can make, and the calls made on every path from an entry point before it."""

    call: Call
    before: frozenset[str]


@dataclass(frozen=True)
class LiveValue:
    """A field set in live code (designated initializer or assignment) or a string literal there."""

    name: str
    node: Node
    unit: Unit
    function: str
    before: frozenset[str]


@dataclass
class _Local:
    """One function walked from its own entry (state ∅): what the flow needs of it."""

    before: dict[int, frozenset[str]] = field(default_factory=dict)
    """id(Call) → calls made on every path from the function's start to it."""
    exit: frozenset[str] | None = None
    success: frozenset[str] | None = None
    """The same over the returns that do not report a failure (``return -EIO``, ``return err`` under
    ``if (err < 0)``): what a caller may count on once it checked the result."""
    """Calls made on every path to the function's end (None: it never returns)."""
    callsites: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    values: set[str] = field(default_factory=set)
    fields: list[tuple[str, Node, Unit, frozenset[str]]] = field(default_factory=list)
    strings: list[tuple[str, Node, Unit, frozenset[str]]] = field(default_factory=list)


class _Walker:
    """The must-analysis of one function body (see the module docstring)."""

    def __init__(self, flow: Flow, function: FunctionDef | None, unit: Unit):
        self.flow, self.function, self.unit = flow, function, unit
        self.name = function.name if function is not None else ""
        self.out = _Local()
        self.returns: list[tuple[Facts, bool]] = []
        """(facts, reports a failure) of each return."""
        self.assumed: list[list[str]] = []
        """Conditions known to hold in the enclosing then-branches (innermost last)."""
        self.loop_exits: list[list[Facts]] = []
        self.gotos: dict[str, list[Facts]] = {}

    def run(self) -> _Local:
        assert self.function is not None
        body = self.function.node.child_by_field_name("body")
        end = self.stmt(body, Facts()) if body is not None else Facts()
        exits: State = None
        successes: State = None
        for state, failure in [*self.returns, *([(end, False)] if end is not None else [])]:
            exits = _meet(exits, state)
            successes = successes if failure else _meet(successes, state)
        self.out.exit = exits.events if exits is not None else None
        self.out.success = successes.events if successes is not None else self.out.exit
        return self.out

    # --- statements -----------------------------------------------------------------------------
    def stmt(self, node: Node | None, state: State) -> State:  # noqa: C901  (one dispatch over C's statements)
        if node is None or state is None and node.type != "labeled_statement":
            return state
        if self.flow.dead(self.unit, node):
            return state
        kind = node.type
        if kind in ("compound_statement", "translation_unit"):
            for child in node.named_children:
                state = self.stmt(child, state)
            return state
        if kind == "expression_statement" or kind == "attributed_statement":
            for child in node.named_children:
                state = self.expr(child, state) if kind == "expression_statement" else self.stmt(child, state)
            return state
        if kind == "declaration":
            for child in node.children_by_field_name("declarator"):
                value = child.child_by_field_name("value") if child.type == "init_declarator" else None
                state = self.expr(value, state)
                declared = child.child_by_field_name("declarator") if value is not None else None
                if declared is not None and declared.type == "identifier" and declared.text:
                    state = self._bind(declared.text.decode(), value, state)
            return state
        if kind == "if_statement":
            return self._if(node, state)
        if kind in ("while_statement", "for_statement", "do_statement"):
            return self._loop(node, state)
        if kind == "switch_statement":
            return self._switch(node, state)
        if kind == "return_statement":
            for child in node.named_children:
                state = self.expr(child, state)
            if state is not None:
                self.returns.append((state, self._reports_failure(node)))
            return None
        if kind == "break_statement":
            if state is not None and self.loop_exits:
                self.loop_exits[-1].append(state)
            return None
        if kind == "continue_statement":
            return None
        if kind == "goto_statement":
            label = node.child_by_field_name("label")
            if state is not None and label is not None:
                self.gotos.setdefault(label.text.decode() if label.text else "", []).append(state)
            return None
        if kind == "labeled_statement":
            label = node.child_by_field_name("label")
            for arrived in self.gotos.get(label.text.decode() if label is not None and label.text else "", []):
                state = arrived if state is None else _meet(state, arrived)
            inner = [c for c in node.named_children if c.type != "statement_identifier"]
            return self.stmt(inner[0], state) if inner else state
        if kind in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
            skip = (node.child_by_field_name("condition"), node.child_by_field_name("name"))
            for child in node.named_children:
                if child.type not in ("preproc_else", "preproc_elif") and child not in skip:
                    state = self.stmt(child, state)
            return state
        return state

    def _if(self, node: Node, state: State) -> State:
        condition = node.child_by_field_name("condition")
        state = self.expr(condition, state)
        if state is None:
            return None
        known = self.flow.value(condition, self.name) if condition is not None else None
        guards = _conjuncts(condition)
        entry = state.assume(guards + _checked_ok(guards, negated=False))
        self.assumed.append(guards)
        then = self.stmt(node.child_by_field_name("consequence"), entry if known != 0 else None)
        self.assumed.pop()
        alternative = node.child_by_field_name("alternative")
        single = len(guards) == 1 and condition is not None and _pure(condition)
        learned = _checked_ok(guards, negated=True) if single else []
        otherwise: State = state.assume(learned) if known is None or known == 0 else None
        if alternative is not None:
            otherwise = self.stmt(alternative.named_children[0] if alternative.named_children else None, otherwise)
        joined = _meet(then, otherwise)
        if joined is not None and then is not None and alternative is None and len(guards) == 1:
            # ``if (C) { … }``: what the branch made holds wherever C is later known to hold
            made = then.events - state.events
            joined = Facts(joined.events, joined.guarded | {(guards[0], e) for e in made})
        return joined

    def _loop(self, node: Node, state: State) -> State:
        kind = node.type
        body = node.child_by_field_name("body")
        condition = node.child_by_field_name("condition")
        value = self.flow.value(condition, self.name) if condition is not None else None
        self.loop_exits.append([])
        if kind == "do_statement":
            state = self.stmt(body, state)
            state = self.expr(condition, state)
            after = state if value != 1 else None
        else:
            if kind == "for_statement":
                init = node.child_by_field_name("initializer")
                state = self.stmt(init, state) if init is not None and init.type == "declaration" else \
                    self.expr(init, state)
            state = self.expr(condition, state)
            forever = condition is None or value not in (None, 0)
            inside = None if value == 0 or state is None else state.assume(_conjuncts(condition))
            end = self.stmt(body, inside)
            if kind == "for_statement":
                self.expr(node.child_by_field_name("update"), end)
            after = None if forever else state
        for exited in self.loop_exits.pop():
            after = _meet(after, exited)
        return after

    def _switch(self, node: Node, state: State) -> State:
        state = self.expr(node.child_by_field_name("condition"), state)
        entry = state
        body = node.child_by_field_name("body")
        self.loop_exits.append([])
        current: State = None
        has_default = False
        for child in body.named_children if body is not None else []:
            if child.type == "case_statement":
                has_default |= child.child_by_field_name("value") is None
                current = _meet(current, entry)
                value = child.child_by_field_name("value")
                for inner in child.named_children:
                    if inner != value:
                        current = self.stmt(inner, current)
            else:
                current = self.stmt(child, current)
        after = _meet(current, None if has_default else entry)
        for exited in self.loop_exits.pop():
            after = _meet(after, exited)
        return after

    # --- expressions ----------------------------------------------------------------------------
    def expr(self, node: Node | None, state: State) -> State:  # noqa: C901
        if node is None or state is None:
            return state
        kind = node.type
        if kind in ("sizeof_expression", "comment", "number_literal", "char_literal"):
            return state
        if kind in ("string_literal", "concatenated_string"):
            self.out.strings.append((node.text.decode(errors="replace") if node.text else "", node, self.unit,
                                     state.events))
            return state
        if kind == "identifier":
            name = node.text.decode() if node.text else ""
            if name in self.flow.program.functions and not self.flow.dead_function(name):
                self.out.values.add(name)
            return self._events(node, state)
        if kind == "call_expression":
            callee = node.child_by_field_name("function")
            if callee is not None and callee.type != "identifier":
                state = self.expr(callee, state)
            arguments = node.child_by_field_name("arguments")
            state = self.expr(arguments, state)
            for argument in arguments.named_children if arguments is not None and state is not None else []:
                if argument.type == "pointer_expression":  # &v handed to a call: v may be written
                    target = argument.child_by_field_name("argument")
                    if target is not None and target.type == "identifier" and target.text and state is not None:
                        state = state.forget(target.text.decode())
            return self._events(node, state)
        if kind == "binary_expression":
            operator = node.child_by_field_name("operator")
            left = self.expr(node.child_by_field_name("left"), state)
            if operator is not None and operator.type in ("&&", "||"):
                decided = self.flow.value(node.child_by_field_name("left"), self.name)
                short = decided == 0 if operator.type == "&&" else decided not in (None, 0)
                assumed = left.assume(_conjuncts(node.child_by_field_name("left"))) \
                    if left is not None and operator.type == "&&" else left
                self.expr(node.child_by_field_name("right"), None if short else assumed)
                return left
            return self.expr(node.child_by_field_name("right"), left)
        if kind == "conditional_expression":
            state = self.expr(node.child_by_field_name("condition"), state)
            return _meet(self.expr(node.child_by_field_name("consequence"), state),
                         self.expr(node.child_by_field_name("alternative"), state))
        if kind in ("initializer_pair", "assignment_expression", "update_expression"):
            target = (node.child_by_field_name("designator") or node.child_by_field_name("left")
                      or node.child_by_field_name("argument"))
            value = node.child_by_field_name("value") or node.child_by_field_name("right")
            state = self.expr(value, state)
            if state is None or target is None:
                return state
            if target.type == "identifier" and target.text:
                state = state.forget(target.text.decode())
                if kind == "assignment_expression" and value is not None:
                    state = self._bind(target.text.decode(), value, state)
            field_name = _field_name(target)
            if field_name and value is not None and state is not None:
                self.out.fields.append((field_name, value, self.unit, state.events))
            return self.expr(target, state) if kind != "initializer_pair" else state
        for child in node.named_children:
            state = self.expr(child, state)
        return state

    def _bind(self, variable: str, value: Node | None, state: State) -> State:
        """``v = f(…)`` with ``f`` local: what ``f`` makes on its success paths holds once ``v`` is checked
        (guard ``ok:v``)."""
        called = strip_expression(value)
        callee = called.child_by_field_name("function") if called is not None and called.type == "call_expression" \
            else None
        name = callee.text.decode() if callee is not None and callee.type == "identifier" and callee.text else ""
        if state is None or name not in self.flow.program.functions or name in self.flow._walking:
            return state
        local = self.flow.local(name)
        extra = (local.success or frozenset()) - (local.exit or frozenset())
        return Facts(state.events, state.guarded | {(f"ok:{variable}", e) for e in extra}) if extra else state

    def _reports_failure(self, node: Node) -> bool:
        """``return -EIO;`` or ``return err;`` inside ``if (err < 0)`` (``!= 0``, ``!= ESP_OK``, …)."""
        value = node.named_children[0] if node.named_children else None
        while value is not None and value.type in ("parenthesized_expression", "cast_expression"):
            value = value.child_by_field_name("value") if value.type == "cast_expression" else value.named_children[0]
        if value is None:
            return False
        if value.type == "unary_expression" and (value.child_by_field_name("operator") or value).type == "-":
            return True
        if value.type == "identifier" and value.text:
            variable = value.text.decode()
            return any(f"ok:{variable}" in _checked_ok(guards, negated=True) for guards in self.assumed
                       if len(guards) == 1)
        return False

    def _events(self, node: Node, state: State) -> State:
        """The calls made at ``node`` (a call, or the use of a local macro whose body calls), in order."""
        for call in self.flow.calls_at.get(_key(self.unit, node), ()):
            if state is None:
                return None
            self.out.before[id(call)] = state.events
            state = state.add({call.name, occurrence(call)})
            if call.name in NO_RETURN:
                return None
            if call.name in self.flow.program.functions and not call.macro:
                self.out.callsites.append((call.name, state.events))
                summary = self.flow.summary(call.name)
                state = None if summary is None else state.add(summary)
        return state


def _field_name(node: Node) -> str | None:
    """``.block_size`` / ``cfg.block_size`` / ``cfg->block_size`` → ``block_size``."""
    if node.type == "field_designator":
        return node.text.decode().lstrip(".") if node.text else None
    if node.type == "field_expression":
        named = node.child_by_field_name("field")
        return named.text.decode() if named is not None and named.text else None
    return None


class Flow:
    """The behaviour of one program: entry points, reachable calls with their must-before sets, live
    fields and strings, and constant values (see the module docstring)."""

    def __init__(self, program: Program, rules: Rules):
        self.program, self.rules = program, rules
        self.calls_at: dict[tuple[str, int, int], list[Call]] = {}
        for call in program.calls:
            self.calls_at.setdefault(_key(call.unit, call.node), []).append(call)
        self._local: dict[str, _Local] = {}
        self._walking: set[str] = set()
        self._eval_depth = 0

    # --- dead code ------------------------------------------------------------------------------
    @cached_property
    def _dead_ranges(self) -> dict[str, list[tuple[int, int]]]:
        """Byte ranges of each file that a constant ``#if``/``#elif`` removes."""
        ranges: dict[str, list[tuple[int, int]]] = {}
        for unit in self.program.units:
            stack = [unit.root]
            while stack:
                node = stack.pop()
                if node.type in ("preproc_if", "preproc_elif"):
                    value = self.value(node.child_by_field_name("condition"), "")
                    alternative = node.child_by_field_name("alternative")
                    end = alternative.start_byte if alternative is not None else node.end_byte
                    if value == 0:
                        ranges.setdefault(unit.path, []).append((node.start_byte, end))
                    elif value is not None and alternative is not None:
                        ranges.setdefault(unit.path, []).append((alternative.start_byte, alternative.end_byte))
                stack.extend(c for c in node.named_children if c.type.startswith("preproc") or
                             c.type in ("translation_unit", "compound_statement", "function_definition"))
        return ranges

    def dead(self, unit: Unit, node: Node) -> bool:
        return any(a <= node.start_byte < b for a, b in self._dead_ranges.get(unit.path, ()))

    def dead_function(self, name: str) -> bool:
        function = self.program.functions.get(name)
        return function is None or self.dead(function.unit, function.node)

    # --- per function ---------------------------------------------------------------------------
    def local(self, name: str) -> _Local:
        if name not in self._local:
            self._walking.add(name)
            function = self.program.functions[name]
            self._local[name] = _Walker(self, function, function.unit).run()
            self._walking.discard(name)
        return self._local[name]

    def summary(self, name: str) -> frozenset[str] | None:
        """What a call of local function ``name`` adds on every path (None: it never returns)."""
        if name in self._walking or self.dead_function(name):
            return frozenset()
        return self.local(name).exit

    # --- the whole program ----------------------------------------------------------------------
    @cached_property
    def _file_scope(self) -> _Local:
        """Address-taken functions, fields and strings of file-scope initializers (vector tables,
        ``K_THREAD_DEFINE``, ``SYS_INIT``): each evaluated from an empty state."""
        out = _Local()
        for unit in self.program.units:
            walker = _Walker(self, None, unit)
            walker.out = out
            for child in unit.root.named_children:
                if child.type in ("declaration", "expression_statement") and not self.dead(unit, child):
                    walker.stmt(child, Facts())
        return out

    @cached_property
    def entries(self) -> dict[str, str]:
        """Entry functions → why: by name, interrupt/callback context, or address taken in live code."""
        found = {n: "program entry" for n in ENTRY_NAMES if n in self.program.functions}
        found.update({n: "called by the SDK by name" for n in self.program.functions if HOOK_NAMES.match(n)})
        for name, why in isr_functions(self.program, self.rules).items():
            found.setdefault(name, why)
        for name in self._file_scope.values:
            found.setdefault(name, "address taken at file scope")
        frontier = list(found)
        seen: set[str] = set()
        while frontier:
            current = frontier.pop()
            if current in seen or self.dead_function(current):
                continue
            seen.add(current)
            local = self.local(current)
            for name in local.values:
                found.setdefault(name, f"address taken in {current}()")
            frontier.extend(n for n in [*local.values, *(c for c, _ in local.callsites)] if n not in seen)
        return {n: why for n, why in found.items() if not self.dead_function(n)}

    @cached_property
    def entry_states(self) -> dict[str, frozenset[str]]:
        """Reachable function → calls made on every path from an entry point to its start."""
        states: dict[str, frozenset[str]] = {name: frozenset() for name in self.entries}
        changed = True
        while changed:
            changed = False
            for name, entry in list(states.items()):
                for callee, before in self.local(name).callsites:
                    if self.dead_function(callee):
                        continue
                    arriving = entry | before - {callee}
                    old = states.get(callee)
                    new = arriving if old is None else old & arriving
                    if new != old:
                        states[callee], changed = new, True
        return states

    @cached_property
    def reached(self) -> list[Reached]:
        """Every call the program can make (in reachable functions, on a live path), in source order."""
        out: list[Reached] = []
        for name, entry in self.entry_states.items():
            local = self.local(name)
            for call in self.program.calls:
                if call.function != name or call.unit is not self.program.functions[name].unit:
                    continue
                before = local.before.get(id(call))
                if before is not None:
                    out.append(Reached(call, entry | before))
        for call in self.program.calls:  # file-scope macro calls (K_THREAD_DEFINE, SYS_INIT): made at start-up
            if not call.function and not self.dead(call.unit, call.node):
                out.append(Reached(call, frozenset()))
        return sorted(out, key=lambda r: (r.call.unit.path, r.call.node.start_byte))

    def calls(self, names: object) -> list[Reached]:
        return [r for r in self.reached if r.call.name in names]  # type: ignore[operator]

    def _live(self, kind: str) -> list[LiveValue]:
        out = [LiveValue(name, node, unit, "", before) for name, node, unit, before in getattr(self._file_scope, kind)]
        for function, entry in self.entry_states.items():
            for name, node, unit, before in getattr(self.local(function), kind):
                out.append(LiveValue(name, node, unit, function, entry | before))
        return out

    @cached_property
    def fields(self) -> list[LiveValue]:
        """Fields set in live code or file-scope initializers (``.block_size = 1024U``, ``h.Init.Mode = …``)."""
        return self._live("fields")

    @cached_property
    def strings(self) -> list[LiveValue]:
        """String literals in live code or file-scope initializers (their text with the quotes)."""
        return self._live("strings")

    # --- constant values ------------------------------------------------------------------------
    def value(self, node: Node | None, function: str) -> int | None:  # noqa: C901
        """The integer value of a constant expression, None when it is not one (or not known here)."""
        if node is None or self._eval_depth > 16:
            return None
        self._eval_depth += 1
        try:
            return self._value(node, function)
        finally:
            self._eval_depth -= 1

    def _value(self, node: Node, function: str) -> int | None:  # noqa: C901
        kind = node.type
        text = node.text.decode(errors="replace") if node.text else ""
        if kind == "number_literal":
            match = _INTEGER.match(text)
            if match is None:
                return None
            digits = match.group(1)
            base = 16 if digits[:2] in ("0x", "0X") else 2 if digits[:2] in ("0b", "0B") else 8 if \
                digits.startswith("0") and len(digits) > 1 else 10
            return int(digits[2:] if base in (16, 2) else digits, base)
        if kind == "char_literal":
            inner = text[1:-1]
            return ord(inner) if len(inner) == 1 else None
        if kind in ("true", "false", "null"):
            return {"true": 1, "false": 0, "null": 0}[kind]
        if kind in ("parenthesized_expression", "preproc_parenthesized_expression"):
            return self.value(node.named_children[0], function) if node.named_children else None
        if kind == "cast_expression":
            return self.value(node.child_by_field_name("value"), function)
        if kind == "identifier":
            return self._identifier(text, function)
        if kind in ("unary_expression", "preproc_unary_expression"):
            operand = self.value(node.child_by_field_name("argument"), function)
            operator = node.child_by_field_name("operator")
            if operand is None or operator is None:
                return None
            return {"-": -operand, "+": operand, "!": int(not operand), "~": ~operand}.get(operator.type)
        if kind in ("binary_expression", "preproc_binary_expression"):
            return _binary(node.child_by_field_name("operator"), self.value(node.child_by_field_name("left"), function),
                           self.value(node.child_by_field_name("right"), function))
        if kind == "conditional_expression":
            condition = self.value(node.child_by_field_name("condition"), function)
            if condition is None:
                return None
            return self.value(node.child_by_field_name("consequence" if condition else "alternative"), function)
        if kind == "sizeof_expression":
            measured = node.child_by_field_name("value")
            if measured is not None:
                return self.size_of(measured, function)
            described = node.child_by_field_name("type")
            return _type_bytes(described.text.decode() if described is not None and described.text else "")
        if kind == "call_expression":
            callee = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if callee is not None and callee.text == b"ARRAY_SIZE" and arguments is not None \
                    and arguments.named_children:
                dims = self._dims(arguments.named_children[0], function)
                return dims[0] if dims else None
        return None

    def _identifier(self, name: str, function: str) -> int | None:
        macro = self.program.object_macros.get(name)
        if macro is not None:
            return self.text_value(macro, function)
        declared = self.program.declaration(function, name)
        if declared is None or declared.pointer or declared.dims or self._assigned(name):
            return None
        initial = self._initializer(declared.unit, declared.rows, name)
        return None if initial is None else self.value(initial, function)

    def text_value(self, text: str, function: str = "") -> int | None:
        """The value of an expression written as text (a macro body, an array dimension)."""
        root = c_parser().parse(f"int rac_value = ({text});".encode()).root_node
        declarator = root.named_children[0].child_by_field_name("declarator") if root.named_children else None
        value = declarator.child_by_field_name("value") if declarator is not None else None
        return None if root.has_error else self.value(value, function)

    def _assigned(self, name: str) -> bool:
        """``name`` is written after its declaration somewhere (so its initializer is not its one value)."""
        for writes in self.program.writes.values():
            for node in writes:
                target = node.child_by_field_name("left") or node.child_by_field_name("argument")
                if target is not None and target.type == "identifier" and target.text == name.encode():
                    return True
        return False

    @staticmethod
    def _initializer(unit: Unit, rows: tuple[int, int], name: str) -> Node | None:
        stack = [unit.root]
        while stack:
            node = stack.pop()
            if node.end_point[0] < rows[0] or node.start_point[0] > rows[1]:
                continue
            if node.type == "init_declarator":
                declarator = node.child_by_field_name("declarator")
                if declarator is not None and declarator.type == "identifier" and declarator.text == name.encode():
                    return node.child_by_field_name("value")
            stack.extend(node.named_children)
        return None

    def _dims(self, node: Node, function: str) -> list[int] | None:
        key = object_key(node)
        declared = self.program.declaration(function, key) if key else None
        if declared is None or not declared.dims:
            return None
        values = [self.text_value(d, function) for d in declared.dims]
        return None if any(v is None for v in values) else [v for v in values if v is not None]

    def size_of(self, node: Node, function: str) -> int | None:
        """Bytes of the object an expression names (``buf``, ``&buf``, ``(uint32_t)buf``); an element for
        ``buf[i]``; None when unknown (a pointer, a struct)."""
        stripped = strip_expression(node)
        if stripped is None:
            return None
        key = object_key(stripped)
        declared = self.program.declaration(function, key) if key else None
        if declared is None:
            return None
        element = _type_bytes(declared.type_text)
        if stripped.type == "subscript_expression":
            return element
        if declared.pointer and not declared.dims:
            return None
        dims = self._dims(stripped, function) if declared.dims else []
        if element is None or dims is None:
            return None
        total = element
        for d in dims:
            total *= d
        return total


def _type_bytes(type_text: str) -> int | None:
    plain = " ".join(_QUALIFIERS.sub(" ", type_text).split())
    return TYPE_BYTES.get(plain)


def _binary(operator: Node | None, left: int | None, right: int | None) -> int | None:
    if operator is None or left is None or right is None:
        return None
    op = operator.type
    if op in ("/", "%") and right == 0:
        return None
    table = {"+": left + right, "-": left - right, "*": left * right, "&": left & right, "|": left | right,
             "^": left ^ right, "==": int(left == right), "!=": int(left != right), "<": int(left < right),
             "<=": int(left <= right), ">": int(left > right), ">=": int(left >= right),
             "&&": int(bool(left and right)), "||": int(bool(left or right))}
    if op in table:
        return table[op]
    if op == "/":
        return int(left / right)
    if op == "%":
        return left - int(left / right) * right
    if op in ("<<", ">>") and 0 <= right < 64:
        return left << right if op == "<<" else left >> right
    return None
