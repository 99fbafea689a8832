"""Static checks of generated C, judged from the source files alone (tree-sitter-c, no preprocessor).

The checks (each failure is located ``Evidence`` naming the file, line and enclosing function):

1. the C parses (no ERROR/MISSING nodes) — ``E_C_PARSE``;
2. every SDK call is known for the framework and version, with the declared number of arguments —
   ``E_UNKNOWN_API``, ``E_API_ARITY``, ``E_DEPRECATED_API``; a call into another framework's API is
   ``E_FOREIGN_API``;
3. required calls come first on the same object (init → configure → start, readiness before use) —
   ``E_CALL_ORDER``/``E_CALL_MISSING``; STM32 peripheral clocks are enabled — ``E_CLOCK_NOT_ENABLED``;
   forbidden calls (disabling a watchdog) — ``E_FORBIDDEN_CALL``; on a core with a D-cache, DMA sources
   are cleaned before the start and destinations invalidated after it — ``E_CACHE_FLUSH_MISSING``,
   ``E_CACHE_INVALIDATE_MISSING``, ``E_CACHE_ORDER``;
4. interrupt-context bodies neither block, sleep, log, allocate nor call thread-only APIs —
   ``E_ISR_BLOCKING``, ``E_ISR_LOGGING``, ``E_ISR_ALLOCATION``, ``E_ISR_UNSAFE_CALL``;
5. file-scope state written in interrupt context and used by thread code is volatile or atomic —
   ``E_ISR_SHARED_NOT_VOLATILE``;
6. results of fallible calls are tested — ``E_UNCHECKED_RETURN``.

Known limits (documented, deliberate): macros are not expanded (a local ``#define`` wrapping an SDK call
hides that call), ordering is judged within one function (a prerequisite in another function counts as
present), and writes to array elements are not treated as shared scalar state (lock-free rings keep their
indices atomic instead).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache

import tree_sitter_c
from tree_sitter import Language, Node, Parser

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.verify.sdk import ApiEntry, Catalog, Rules, StdLib

_LANGUAGE = Language(tree_sitter_c.language())

#: File suffixes parsed as C.
C_SUFFIXES = (".c", ".h")

_LVALUE_NODES = ("identifier", "field_expression", "pointer_expression", "subscript_expression")

_ATOMIC_TYPES = re.compile(r"^(atomic_\w+|atomic_t|_Atomic\b.*|std::atomic.*)$")


@cache
def _parser() -> Parser:
    return Parser(_LANGUAGE)


def _text(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


# --------------------------------------------------------------------------------------------------
# Preprocessing: blank attribute-like macros tree-sitter cannot parse, keeping line numbers intact.
# --------------------------------------------------------------------------------------------------


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def _matching_paren(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


def _strip_calls(text: str, names: list[str], keep_argument: bool) -> str:
    """Blank ``NAME(...)`` — or, with ``keep_argument``, only ``NAME(`` and its ``)`` — keeping offsets."""
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    chars = list(text)
    for match in pattern.finditer(text):
        close = _matching_paren(text, match.end() - 1)
        span = [*range(match.start(), match.end()), close] if keep_argument else range(match.start(), close + 1)
        for i in span:
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


#: A ``#define`` on one line (name, ``(`` when function-like, body) and one with backslashes/continuations.
_DEFINE_LINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\(?)([^\n\\]*)$", re.M)
_DEFINE_CONTINUED = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\()?([^\n\\]*(?:\\[\s\S][^\n\\]*)+)", re.M)


@dataclass(frozen=True)
class Prepared:
    """A source file ready for tree-sitter, and the macros it defines."""

    text: str
    """The text with ``#define`` lines and attribute macros blanked (line structure unchanged)."""
    defines: dict[str, str | None]
    """Macro name → body of an object-like macro, or None for a function-like one."""


def _take_defines(text: str) -> tuple[str, dict[str, str | None]]:
    """Collect ``#define``s and blank their lines: macro bodies are not C tree-sitter can judge."""
    defines: dict[str, str | None] = {}

    def blank(match: re.Match[str]) -> str:
        defines[match.group(1)] = None if match.group(2) else match.group(3).replace("\\\n", " ").strip()
        return "\n" * match.group(0).count("\n")

    if "\\" in text:
        text = _DEFINE_CONTINUED.sub(blank, text)
    # One-line defines (the bulk of register headers) go through C-level findall/sub, no callback.
    for name, paren, body in _DEFINE_LINE.findall(text):
        defines[name] = None if paren else body.strip()
    return _DEFINE_LINE.sub("", text), defines


def prepare_source(text: str, rules: Rules) -> Prepared:
    """Blank the file's ``#define`` lines and the framework's attribute macros (same line structure)."""
    source = rules.section("source")
    out, defines = _take_defines(text)
    attr_names = [n for n in source.get("attribute_macros", ()) if n in out]
    attr_calls = [n for n in source.get("attribute_calls", ()) if n in out]
    attributes = set(source.get("attribute_macros", ())) | set(source.get("attribute_calls", ()))
    # Local object-like macros that expand to attributes (``#define DMA_BUF __attribute__((...))``).
    for name, body in defines.items():
        head = body.split("(")[0].strip() if body else ""
        if head == "__attribute__" or head in attributes:
            attr_names.append(name)
    out = _strip_calls(out, attr_calls, keep_argument=False)
    out = _strip_calls(out, [n for n in source.get("wrapper_calls", ()) if n in out], keep_argument=True)
    if attr_names:
        out = re.sub(r"\b(" + "|".join(map(re.escape, attr_names)) + r")\b", _blank, out)
    volatile = {k: v for k, v in (source.get("volatile_macros") or {}).items() if k in out}
    if volatile:
        out = re.sub(r"\b(" + "|".join(map(re.escape, volatile)) + r")\b", lambda m: volatile[m.group(1)], out)
    return Prepared(out, defines)


# --------------------------------------------------------------------------------------------------
# The program model: what the files define and call.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One call expression (a function or a function-like macro invocation)."""

    name: str
    node: Node
    unit: Unit
    function: str
    """Enclosing function name; empty at file scope (e.g. ``K_SEM_DEFINE(...)``)."""

    @property
    def line(self) -> int:
        return self.node.start_point[0] + 1

    @property
    def args(self) -> list[Node]:
        arguments = self.node.child_by_field_name("arguments")
        return [] if arguments is None else [c for c in arguments.named_children if c.type != "comment"]

    def arg_text(self, index: int) -> str | None:
        args = self.args
        if not -len(args) <= index < len(args):
            return None
        return _text(self.unit.src, args[index]).strip()

    def arg_node(self, index: int) -> Node | None:
        args = self.args
        return args[index] if -len(args) <= index < len(args) else None

    @property
    def location(self) -> str:
        return self.unit.location(self.node, self.function)


@dataclass(frozen=True)
class FunctionDef:
    """A function the artifact defines (so calls to it are local, and its body can be judged)."""

    name: str
    unit: Unit
    node: Node
    """The ``function_definition`` node."""


@dataclass(frozen=True)
class GlobalVar:
    """A file-scope object and whether it is safe to share with interrupt context."""

    name: str
    unit: Unit
    line: int
    type_text: str
    qualifiers: frozenset[str]

    @property
    def volatile_or_atomic(self) -> bool:
        return bool({"volatile", "_Atomic"} & self.qualifiers) or bool(_ATOMIC_TYPES.match(self.type_text))


@dataclass(eq=False)
class Unit:
    """One parsed source file (identity matters: calls compare their unit with ``is``)."""

    path: str
    text: str
    src: bytes
    root: Node

    def location(self, node: Node, function: str = "") -> str:
        where = f"{self.path}:{node.start_point[0] + 1}"
        return f"{where} in {function}()" if function else where


@dataclass
class Program:
    """Everything the checks need about the C files of one artifact."""

    units: list[Unit] = field(default_factory=list)
    functions: dict[str, FunctionDef] = field(default_factory=dict)
    macros: set[str] = field(default_factory=set)
    object_macros: dict[str, str] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    variables: set[str] = field(default_factory=set)
    globals: dict[str, GlobalVar] = field(default_factory=dict)
    parse_errors: list[tuple[Unit, Node]] = field(default_factory=list)
    attribute_functions: dict[str, set[str]] = field(default_factory=dict)
    """Attribute marker (``IRAM_ATTR``) → names of the functions declared with it."""
    initializer_fields: list[tuple[str, Node, Unit, str]] = field(default_factory=list)
    """(field name, value node, unit, enclosing function) of designated initializers and field assignments."""

    _uses: dict[str, list[tuple[int, str, Node]]] = field(default_factory=dict)
    _locals: dict[str, set[str]] = field(default_factory=dict)

    def lvalue_uses(self, function: FunctionDef) -> list[tuple[int, str, Node]]:
        """(offset, whitespace-free text, node) of every identifier/field/deref/element use, in order."""
        if function.name not in self._uses:
            src = function.unit.src
            uses = [
                (node.start_byte, re.sub(r"\s+", "", _text(src, node)), node)
                for node in _walk(function.node)
                if node.type in _LVALUE_NODES
            ]
            self._uses[function.name] = sorted(uses, key=lambda item: item[0])
        return self._uses[function.name]

    def locals_of(self, function: FunctionDef) -> set[str]:
        """Parameters and local variables of ``function`` (they shadow file-scope names)."""
        if function.name not in self._locals:
            self._locals[function.name] = _locals(function)
        return self._locals[function.name]

    def calls_named(self, names: object) -> list[Call]:
        return [c for c in self.calls if c.name in names]  # type: ignore[operator]

    def is_local(self, name: str) -> bool:
        return name in self.functions or name in self.macros

    def function_of(self, call: Call) -> FunctionDef | None:
        return self.functions.get(call.function)


def _declarator_name(node: Node | None) -> tuple[str | None, bool]:
    """(identifier, is_function) of a declarator; function pointers count as variables."""
    is_function = False
    while node is not None:
        if node.type in ("identifier", "field_identifier", "type_identifier"):
            return node.text.decode() if node.text else None, is_function
        if node.type == "function_declarator":
            inner = node.child_by_field_name("declarator")
            while inner is not None and inner.type == "parenthesized_declarator":
                inner = inner.named_children[0] if inner.named_children else None
            if inner is not None and inner.type == "pointer_declarator":
                node = inner
                continue
            is_function = True
            node = inner
            continue
        if node.type == "parenthesized_declarator":
            node = node.named_children[0] if node.named_children else None
            continue
        node = node.child_by_field_name("declarator")
    return None, is_function


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _function_name(definition: Node) -> str | None:
    name, _ = _declarator_name(definition.child_by_field_name("declarator"))
    return name


def _collect(program: Program, unit: Unit) -> None:
    stack: list[tuple[Node, str]] = [(unit.root, "")]
    while stack:
        node, function = stack.pop()
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            program.parse_errors.append((unit, node))
        elif kind == "function_definition":
            name = _function_name(node)
            if name:
                program.functions.setdefault(name, FunctionDef(name, unit, node))
                function = name
        elif kind == "call_expression":
            callee = node.child_by_field_name("function")
            if callee is not None and callee.type == "identifier":
                program.calls.append(Call(_text(unit.src, callee), node, unit, function))
        elif kind in ("declaration", "parameter_declaration"):
            _collect_declaration(program, unit, node, function)
        elif kind == "initializer_pair":
            designator = node.child_by_field_name("designator")
            value = node.child_by_field_name("value")
            if designator is not None and value is not None and designator.type == "field_designator":
                program.initializer_fields.append((_text(unit.src, designator).lstrip("."), value, unit, function))
        elif kind == "assignment_expression":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is not None and right is not None and left.type == "field_expression":
                name_node = left.child_by_field_name("field")
                if name_node is not None:
                    program.initializer_fields.append((_text(unit.src, name_node), right, unit, function))
        if kind not in _LEAF_SUBTREES:
            stack.extend((child, function) for child in reversed(node.children))


#: Subtrees that hold no call, declaration of interest or initializer: not descended into.
_LEAF_SUBTREES = frozenset(
    {"enumerator_list", "field_declaration_list", "comment", "string_literal", "number_literal", "char_literal"}
)


def _collect_declaration(program: Program, unit: Unit, node: Node, function: str) -> None:
    declarators = node.children_by_field_name("declarator")
    type_node = node.child_by_field_name("type")
    qualifiers = frozenset(_text(unit.src, c) for c in node.children if c.type == "type_qualifier")
    for declarator in declarators:
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
        name, is_function = _declarator_name(target)
        if not name or is_function:
            continue
        program.variables.add(name)
        if node.type == "declaration" and not function:
            program.globals.setdefault(
                name,
                GlobalVar(
                    name=name,
                    unit=unit,
                    line=node.start_point[0] + 1,
                    type_text=_text(unit.src, type_node) if type_node is not None else "",
                    qualifiers=qualifiers,
                ),
            )


def build_program(files: dict[str, str], rules: Rules) -> Program:
    """Parse every C file of the artifact and collect definitions, calls and declarations."""
    program = Program()
    markers = list(rules.section("isr").get("attribute_markers", ()))
    for path in sorted(files):
        if not path.endswith(C_SUFFIXES):
            continue
        text = files[path]
        prepared = prepare_source(text, rules)
        src = prepared.text.encode("utf-8")
        unit = Unit(path, text, src, _parser().parse(src).root_node)
        program.units.append(unit)
        program.macros.update(prepared.defines)
        program.object_macros.update({k: v for k, v in prepared.defines.items() if v is not None})
        _collect(program, unit)
        for marker in (m for m in markers if m in text):
            found = re.findall(rf"\b{re.escape(marker)}\b[^;{{}}()]*?\b(\w+)\s*\(", text)
            program.attribute_functions.setdefault(marker, set()).update(found)
    return program


# --------------------------------------------------------------------------------------------------
# Shared helpers for the checks.
# --------------------------------------------------------------------------------------------------


def _strip_expression(node: Node | None) -> Node | None:
    """Remove parentheses, casts, ``&`` and ``*`` around an expression."""
    while node is not None:
        if node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type == "pointer_expression":
            node = node.child_by_field_name("argument")
        else:
            return node
    return None


def object_key(node: Node | None) -> str | None:
    """The object an argument names: ``&adc_ch[i]`` → ``adc_ch``, ``led.port`` → ``led``, ``dev`` → ``dev``."""
    node = _strip_expression(node)
    while node is not None and node.type in ("field_expression", "subscript_expression"):
        node = _strip_expression(node.child_by_field_name("argument"))
    if node is not None and node.type == "identifier" and node.text:
        return node.text.decode()
    return None


def _evidence(code: str, message: str, location: str, objects: list[str], fix: str | None = None) -> Evidence:
    return Evidence(
        code=code,
        message=message,
        location=location,
        objects=objects,
        relaxations=[Relaxation(description=fix)] if fix else [],
    )


# --------------------------------------------------------------------------------------------------
# Check 1: the C parses.
# --------------------------------------------------------------------------------------------------


def check_parse(program: Program) -> list[Evidence]:
    found: list[Evidence] = []
    for unit, node in program.parse_errors[:20]:
        function = ""
        parent = node.parent
        while parent is not None:
            if parent.type == "function_definition":
                function = _function_name(parent) or ""
                break
            parent = parent.parent
        snippet = _text(unit.src, node).strip().splitlines()[0][:60] if node.end_byte > node.start_byte else ""
        what = f"missing {node.type!r}" if node.is_missing else f"cannot parse {snippet!r}"
        found.append(_evidence("E_C_PARSE", f"C syntax error: {what}", unit.location(node, function), [unit.path]))
    return found


# --------------------------------------------------------------------------------------------------
# Check 2: every SDK call is known, with the right arity, for this framework and version.
# --------------------------------------------------------------------------------------------------


def _suggest(name: str, catalog: Catalog) -> list[str]:
    return difflib.get_close_matches(name, list(catalog.entries), n=3, cutoff=0.72)


def check_apis(
    program: Program, catalog: Catalog, foreign: Callable[[], list[Catalog]], stdlib: StdLib
) -> tuple[list[Evidence], list[Evidence]]:
    """(unknown/arity/deprecated evidence, foreign-framework evidence).

    ``foreign`` yields the other frameworks' catalogs; it is called only when a name is unknown, so a
    clean artifact never pays for loading them.
    """
    unknown: list[Evidence] = []
    foreign_found: list[Evidence] = []
    seen: set[tuple[str, str, str]] = set()
    for call in program.calls:
        name = call.name
        if program.is_local(name) or name in program.variables or name in stdlib:
            continue
        entry = catalog.get(name)
        if entry is not None:
            count = len(call.args)
            if not entry.accepts(count):
                unknown.append(
                    _evidence(
                        "E_API_ARITY",
                        f"{name} is called with {count} argument(s) but {catalog.label} {catalog.version} "
                        f"declares {entry.signature} in {entry.header}",
                        call.location,
                        [name, entry.header],
                        f"call {entry.signature}",
                    )
                )
            elif entry.deprecated:
                unknown.append(
                    _evidence(
                        "E_DEPRECATED_API",
                        f"{name} is a deprecated legacy API ({entry.header}) in {catalog.label} {catalog.version}",
                        call.location,
                        [name, entry.header],
                        "use the current driver API of this version",
                    )
                )
            continue
        key = (name, call.unit.path, call.function)
        if key in seen:
            continue
        seen.add(key)
        owner = next((other for other in foreign() if name in other), None)
        if owner is not None:
            owner_entry = owner.get(name)
            header = owner_entry.header if owner_entry else ""
            foreign_found.append(
                _evidence(
                    "E_FOREIGN_API",
                    f"{name} is a {owner.label} API ({header}); this artifact is {catalog.label} "
                    f"and must not call another framework's API",
                    call.location,
                    [name, owner.label],
                    f"use the {catalog.label} equivalent" + _hint(_suggest(name, catalog)),
                )
            )
            continue
        suggestions = _suggest(name, catalog)
        unknown.append(
            _evidence(
                "E_UNKNOWN_API",
                f"{name} is not declared by {catalog.label} {catalog.version}, the C standard library, nor "
                f"defined in the artifact (hallucinated API?)",
                call.location,
                [name],
                "replace it with a real API" + _hint(suggestions) if suggestions else None,
            )
        )
    return unknown, foreign_found


def _hint(names: list[str]) -> str:
    return f" (closest: {', '.join(names)})" if names else ""


# --------------------------------------------------------------------------------------------------
# Check 3: call order, prerequisites, clocks, forbidden calls, DMA cache maintenance.
# --------------------------------------------------------------------------------------------------


def _defined_objects(program: Program, macros: frozenset[str]) -> set[str]:
    """Objects created statically by ``K_SEM_DEFINE(name, …)`` and friends (their first argument)."""
    found: set[str] = set()
    for call in program.calls:
        if call.name in macros:
            key = object_key(call.arg_node(0))
            if key:
                found.add(key)
    return found


def check_order(program: Program, rules: Rules) -> list[Evidence]:
    found: list[Evidence] = []
    reported: set[tuple[str, str, str | None]] = set()
    for rule in rules.order:
        firsts = [c for c in program.calls if c.name in rule.first]
        defined = _defined_objects(program, rule.defined_by) if rule.defined_by else set()
        for call in program.calls:
            if call.name not in rule.then or call.name in rule.first:
                continue
            key = None if rule.key is None else object_key(call.arg_node(rule.key_index(call.name)))
            if key is not None and key in _parameters(program.function_of(call)):
                # A handle passed in (``huart`` in a HAL callback) is initialized by the caller, under
                # another name: only the presence of the prerequisite can be judged.
                key = None
            if key is not None and key in defined:
                continue
            matching = [f for f in firsts if key is None or object_key(f.arg_node(rule.key_index(f.name))) == key]
            same_function = [f for f in matching if f.function == call.function and f.unit is call.unit]
            if any(f.node.start_byte < call.node.start_byte for f in same_function):
                continue
            marker = (call.name, call.location, key)
            if marker in reported:
                continue
            wanted = " or ".join(rule.first_names)
            on = f" on {key}" if key else ""
            if same_function:
                reported.add(marker)
                found.append(
                    _evidence(
                        "E_CALL_ORDER",
                        f"{call.name}{on} is called before {same_function[0].name} "
                        f"(line {same_function[0].line}); {wanted} must come first",
                        call.location,
                        [call.name, same_function[0].name] + ([key] if key else []),
                        f"call {wanted} before {call.name}",
                    )
                )
            elif not matching and rule.required:
                reported.add(marker)
                found.append(
                    _evidence(
                        "E_CALL_MISSING",
                        f"{call.name}{on} is used but {wanted} is never called{on} in the artifact",
                        call.location,
                        [call.name, *rule.first_names] + ([key] if key else []),
                        f"call {wanted}{on} before {call.name}",
                    )
                )
    return found


def _parameters(function: FunctionDef | None) -> set[str]:
    if function is None:
        return set()
    declarator = function.node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    names: set[str] = set()
    for parameter in parameters.named_children if parameters is not None else ():
        name, _ = _declarator_name(parameter.child_by_field_name("declarator"))
        if name:
            names.add(name)
    return names


def check_forbidden(program: Program, rules: Rules) -> list[Evidence]:
    forbidden = rules.section("forbidden")
    return [
        _evidence("E_FORBIDDEN_CALL", f"{call.name}: {forbidden[call.name]}", call.location, [call.name])
        for call in program.calls
        if call.name in forbidden and not program.is_local(call.name)
    ]


def _instance_base(name: str) -> tuple[str, set[str]]:
    trimmed = re.sub(r"_(Stream|Channel)\d+$", "", name)
    return re.sub(r"\d+", "", trimmed), set(re.sub(r"\D", "", trimmed))


_GATED: dict[tuple[int, str], frozenset[str]] = {}


def _gated_bases(catalog: Catalog, pattern: re.Pattern[str]) -> frozenset[str]:
    """Peripheral kinds (``USART``, ``GPIOB``, ``ADC``) that have a clock-enable macro in this catalog."""
    key = (id(catalog), pattern.pattern)
    if key not in _GATED:
        _GATED[key] = frozenset(_instance_base(m.group(1))[0] for name in catalog.entries if (m := pattern.match(name)))
    return _GATED[key]


def check_clocks(program: Program, rules: Rules, catalog: Catalog) -> list[Evidence]:
    """STM32: every peripheral instance a handle uses, and every GPIO port initialized, has its clock on."""
    spec = rules.section("clock_enable")
    if not spec:
        return []
    field_name = spec["instance_field"]
    pattern = re.compile("^" + re.escape(spec["macro"]).replace(r"\{\}", r"(\w+?)") + "$")
    gated_bases = _gated_bases(catalog, pattern)
    enabled = {m.group(1) for call in program.calls if (m := pattern.match(call.name))}
    uses: list[tuple[str, str]] = []
    for name, value, unit, function in program.initializer_fields:
        if name == field_name and value.type == "identifier" and value.text:
            uses.append((value.text.decode(), unit.location(value, function)))
    for call in program.calls:
        if call.name in spec.get("gpio_init", ()):
            port = object_key(call.arg_node(0))
            if port:
                uses.append((port, call.location))
    found: list[Evidence] = []
    for instance, location in uses:
        base, digits = _instance_base(instance)
        if base not in gated_bases:
            continue
        ok = any(_instance_base(e)[0] == base and digits <= _instance_base(e)[1] for e in enabled)
        if not ok:
            macro = spec["macro"].format(instance)
            found.append(
                _evidence(
                    "E_CLOCK_NOT_ENABLED",
                    f"{instance} is used but its bus clock is never enabled ({macro} or the family's "
                    f"equivalent is not called)",
                    location,
                    [instance, macro],
                    f"call {macro}() in the MSP init before the peripheral is initialized",
                )
            )
    return found


def has_noncacheable_buffers(program: Program, rules: Rules) -> bool:
    markers = rules.section("dma_cache").get("noncacheable_markers", ())
    return any(marker in unit.text for unit in program.units for marker in markers)


def check_dma_cache(program: Program, rules: Rules, cache_present: bool) -> list[Evidence]:
    """Flush (clean) before a DMA reads memory; invalidate after a DMA wrote it — on cached cores."""
    found: list[Evidence] = []
    flushes = [c for c in program.calls if c.name in rules.dma_flush]
    invalidates = [c for c in program.calls if c.name in rules.dma_invalidate]
    required = cache_present and not has_noncacheable_buffers(program, rules)
    for start in program.calls:
        reads = start.name in rules.dma_start_tx or start.name in rules.dma_start_both
        writes = start.name in rules.dma_start_rx or start.name in rules.dma_start_both
        if not (reads or writes):
            continue
        same = [c for c in flushes if c.function == start.function and c.unit is start.unit]
        if reads and not any(c.node.start_byte < start.node.start_byte for c in same):
            if same:
                found.append(
                    _evidence(
                        "E_CACHE_ORDER",
                        f"{same[0].name} (line {same[0].line}) runs after {start.name}: the DMA may read stale memory",
                        start.location,
                        [start.name, same[0].name],
                        f"clean the source range before {start.name}",
                    )
                )
            elif required:
                found.append(
                    _evidence(
                        "E_CACHE_FLUSH_MISSING",
                        f"{start.name} starts a DMA that reads memory but the D-cache is not cleaned "
                        f"({' / '.join(sorted(rules.dma_flush.exact))}) before it in {start.function}()",
                        start.location,
                        [start.name],
                        "clean the buffer range before the start, or place the buffer in non-cacheable memory",
                    )
                )
        if writes and required:
            after = [
                c
                for c in invalidates
                if not (c.function == start.function and c.unit is start.unit)
                or c.node.start_byte > start.node.start_byte
            ]
            if not after:
                found.append(
                    _evidence(
                        "E_CACHE_INVALIDATE_MISSING",
                        f"{start.name} starts a DMA that writes memory but the D-cache range is never "
                        f"invalidated after completion ({' / '.join(sorted(rules.dma_invalidate.exact))})",
                        start.location,
                        [start.name],
                        "invalidate the destination range after the transfer completes, before reading it",
                    )
                )
    return found


# --------------------------------------------------------------------------------------------------
# Check 4: interrupt-context bodies.
# --------------------------------------------------------------------------------------------------


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


def check_isr(program: Program, rules: Rules, catalog: Catalog, stdlib: StdLib, isr: dict[str, str]) -> list[Evidence]:
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
            found.append(_evidence("E_ISR_UNSAFE_CALL", f"{name} in ISR: {unsafe[name]}; {context}", where, [name]))
        elif suffix and not name.endswith(suffix) and f"{name}{suffix}" in catalog:
            found.append(
                _evidence(
                    "E_ISR_UNSAFE_CALL",
                    f"{name} is not interrupt-safe; {context}",
                    where,
                    [name, f"{name}{suffix}"],
                    f"use {name}{suffix}",
                )
            )
        elif name in rules.logs or name in stdlib.logs:
            found.append(
                _evidence(
                    "E_ISR_LOGGING",
                    f"{name} logs/prints in interrupt context; {context}",
                    where,
                    [name],
                    "hand the value to a thread (queue/semaphore/atomic flag) and log there",
                )
            )
        elif name in rules.allocates or name in stdlib.allocates:
            found.append(
                _evidence(
                    "E_ISR_ALLOCATION",
                    f"{name} allocates or frees heap memory in interrupt context; {context}",
                    where,
                    [name],
                    "use a statically allocated buffer or pool",
                )
            )
        elif name in rules.blocking or _has_blocking_param(entry, blocking_param):
            found.append(
                _evidence(
                    "E_ISR_BLOCKING",
                    f"{name} blocks or sleeps; {context}",
                    where,
                    [name],
                    "defer the blocking work to a thread or work queue",
                )
            )
        elif name in timeout_args:
            timeout = call.arg_text(timeout_args[name])
            if timeout not in no_wait:
                found.append(
                    _evidence(
                        "E_ISR_BLOCKING",
                        f"{name} with timeout {timeout} may block; {context}",
                        where,
                        [name, str(timeout)],
                        f"pass {' or '.join(sorted(no_wait))} in interrupt context",
                    )
                )
    return found


def _has_blocking_param(entry: ApiEntry | None, token: str | None) -> bool:
    return bool(token and entry and any(re.search(rf"\b{token}\b", p) for p in entry.params))


# --------------------------------------------------------------------------------------------------
# Check 5: state shared between interrupt context and threads.
# --------------------------------------------------------------------------------------------------


def _locals(function: FunctionDef) -> set[str]:
    names: set[str] = set()
    for node in _walk(function.node):
        if node.type in ("declaration", "parameter_declaration"):
            for declarator in node.children_by_field_name("declarator"):
                target = (
                    declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
                )
                name, is_function = _declarator_name(target)
                if name and not is_function:
                    names.add(name)
    return names


def _written_base(node: Node | None) -> Node | None:
    """The identifier a write lands on (``x``, ``s.f``); None for element/pointer writes."""
    while node is not None and node.type in ("parenthesized_expression", "field_expression"):
        if node.type == "field_expression":
            operator = node.child_by_field_name("operator")
            if operator is not None and operator.type == "->":
                return None
            node = node.child_by_field_name("argument")
        else:
            node = node.named_children[0] if node.named_children else None
    return node if node is not None and node.type == "identifier" else None


def check_shared_state(program: Program, isr: dict[str, str]) -> list[Evidence]:
    found: list[Evidence] = []
    readers: dict[str, str] = {}
    for name, function in program.functions.items():
        if name in isr:
            continue
        local = program.locals_of(function)
        for _, ident, node in program.lvalue_uses(function):
            if node.type == "identifier" and ident in program.globals and ident not in local:
                readers.setdefault(ident, name)
    reported: set[str] = set()
    for name in sorted(isr):
        function = program.functions[name]
        local = program.locals_of(function)
        for node in _walk(function.node):
            if node.type == "assignment_expression":
                target = _written_base(node.child_by_field_name("left"))
            elif node.type == "update_expression":
                target = _written_base(node.child_by_field_name("argument"))
            else:
                continue
            if target is None or not target.text:
                continue
            variable = target.text.decode()
            shared = program.globals.get(variable)
            if (
                shared is None
                or variable in local
                or variable in reported
                or variable not in readers
                or shared.volatile_or_atomic
            ):
                continue
            reported.add(variable)
            found.append(
                _evidence(
                    "E_ISR_SHARED_NOT_VOLATILE",
                    f"{variable} ({shared.type_text}, {shared.unit.path}:{shared.line}) is written in interrupt "
                    f"context by {name}() and used by {readers[variable]}(), but is neither volatile nor atomic",
                    function.unit.location(node, name),
                    [variable, name, readers[variable]],
                    f"declare {variable} volatile, or make it atomic (atomic_t / _Atomic)",
                )
            )
    return found


# --------------------------------------------------------------------------------------------------
# Check 6: results of fallible calls are tested.
# --------------------------------------------------------------------------------------------------


def is_fallible(call: Call, entry: ApiEntry | None, rules: Rules, stdlib: StdLib) -> str | None:
    """Why the call's result must be tested (None when it need not)."""
    name = call.name
    fallible = rules.section("fallible")
    forever = dict(fallible.get("forever_args") or {})
    if name in forever and call.arg_text(forever[name]) in set(fallible.get("forever_tokens", ())):
        return None
    if name in rules.fallible_exclude:
        return None
    if name in rules.null_on_failure or name in stdlib.null_on_failure:
        return "returns NULL on failure"
    if name in rules.fallible_include:
        return "returns a status that can report failure"
    if entry is None or entry.kind != "function":
        return None
    headers = tuple(fallible.get("return_headers", ("",)))
    if entry.returns in set(fallible.get("returns", ())) and entry.header.startswith(headers):
        return f"returns {entry.returns} (error code)"
    return None


def _first_use_after(program: Program, function: FunctionDef, variable: str, after: int) -> Node | None:
    for start, text, node in program.lvalue_uses(function):
        if start >= after and text == variable:
            return node
    return None


def _result_checked(call: Call, program: Program) -> tuple[bool, str]:
    node = call.node
    parent = node.parent
    discarded_by_cast = False
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        if parent.type == "cast_expression":
            discarded_by_cast = True
        node, parent = parent, parent.parent
    if parent is None:
        return True, ""
    if parent.type == "expression_statement":
        return False, "discarded with a (void) cast" if discarded_by_cast else "discarded"
    variable: str | None = None
    anchor = parent
    if parent.type == "assignment_expression":
        outer = parent.parent
        while outer is not None and outer.type == "parenthesized_expression":
            outer = outer.parent
        if outer is not None and outer.type != "expression_statement":
            return True, ""  # ``if ((ret = f()) < 0)``: the assigned value is tested on the spot
        operator = parent.child_by_field_name("operator")
        right = parent.child_by_field_name("right")
        left = parent.child_by_field_name("left")
        if operator is not None and operator.type == "=" and right == node and left is not None:
            variable = re.sub(r"\s+", "", _text(call.unit.src, left))
    elif parent.type == "init_declarator":
        variable, _ = _declarator_name(parent.child_by_field_name("declarator"))
    if variable is None:
        return True, ""
    function = program.function_of(call)
    if function is None:
        return True, ""
    use = _first_use_after(program, function, variable, anchor.end_byte)
    if use is None:
        return False, f"stored in {variable} but never tested"
    use_parent = use.parent
    if (
        use_parent is not None
        and use_parent.type == "assignment_expression"
        and use_parent.child_by_field_name("left") == use
        and (op := use_parent.child_by_field_name("operator")) is not None
        and op.type == "="
    ):
        return False, f"stored in {variable} and overwritten (line {use.start_point[0] + 1}) before being tested"
    return True, ""


def check_returns(program: Program, rules: Rules, catalog: Catalog, stdlib: StdLib) -> list[Evidence]:
    found: list[Evidence] = []
    for call in program.calls:
        if not call.function or program.is_local(call.name):
            continue
        reason = is_fallible(call, catalog.get(call.name), rules, stdlib)
        if reason is None:
            continue
        checked, how = _result_checked(call, program)
        if not checked:
            found.append(
                _evidence(
                    "E_UNCHECKED_RETURN",
                    f"the result of {call.name} ({reason}) is {how}",
                    call.location,
                    [call.name],
                    f"test the result of {call.name} and handle the failure",
                )
            )
    return found
