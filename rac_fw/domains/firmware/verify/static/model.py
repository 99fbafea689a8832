"""The program model: what the artifact's C files define, declare and call (one parse per file, memoized).

Macros the artifact itself defines (in any of its files) are expanded at their uses for call analysis:
``#define SAY(x) printk(x)`` makes ``SAY("hi")`` a ``printk`` call located at the use (arguments
substituted, ``#``/``##`` applied, nested local macros followed). The SDK's macros are never expanded: the
catalogs judge them as the APIs they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.verify.sdk import Rules, split_top_level
from rac_fw.domains.firmware.verify.static.preprocess import (
    Macro,
    Memo,
    c_parser,
    calling_macros,
    defined_macros,
    matching_paren,
    node_text,
    prepare_source,
)

#: File suffixes parsed as C.
C_SUFFIXES = (".c", ".h")

_LVALUE_NODES = frozenset({"identifier", "field_expression", "pointer_expression", "subscript_expression"})

_ATOMIC_TYPES = re.compile(r"^(atomic_\w+|atomic_t|_Atomic\b.*|std::atomic.*)$")



@dataclass(frozen=True)
class Call:
    """One call expression (a function or a function-like macro invocation)."""

    name: str
    node: Node
    unit: Unit
    function: str
    """Enclosing function name; empty at file scope (e.g. ``K_SEM_DEFINE(...)``)."""
    macro: str = ""
    """For a call a local macro's body makes: the macro, whose use ``node`` is (location and order)."""
    expansion: Node | None = None
    """For a call made through a macro: the call in the parsed expansion (its arguments are read there)."""
    whole: bool = True
    """The expansion is this call alone, so the macro use's context says whether its result is tested."""

    @property
    def line(self) -> int:
        return self.node.start_point[0] + 1

    @property
    def args(self) -> list[Node]:
        arguments = (self.expansion or self.node).child_by_field_name("arguments")
        return [] if arguments is None else [c for c in arguments.named_children if c.type != "comment"]

    def arg_text(self, index: int) -> str | None:
        args = self.args
        if not -len(args) <= index < len(args):
            return None
        return (args[index].text or b"").decode("utf-8", errors="replace").strip()

    @property
    def label(self) -> str:
        """The callee, with the macro it is hidden behind."""
        return f"{self.name} (through macro {self.macro})" if self.macro else self.name

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
    parameters: tuple[str | None, ...] = ()
    """Parameter names in order (None for an unnamed one)."""


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


@dataclass(frozen=True)
class Declared:
    """The shape of one declared variable: what the DMA cache check needs to tell a buffer from a pointer."""

    type_text: str
    pointer: bool
    """A pointer (or a parameter, which never owns storage): it names no buffer by itself."""
    dims: tuple[str, ...]
    """Array dimensions as written (``BUF_SIZE``, ``64U``), outermost first."""
    unit: Unit
    rows: tuple[int, int]
    """First and last 0-based line of the declaration (its attributes, section and markers are there)."""

    def source(self) -> str:
        """The declaration as written (attributes and markers included, which preprocessing blanked)."""
        return "\n".join(self.unit.text.split("\n")[self.rows[0] : self.rows[1] + 1])


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
    """Everything the checks need about the C files of one artifact (or, while collecting, of one file)."""

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
    uses: dict[str, list[Node]] = field(default_factory=dict)
    """Function → its identifier/field/deref/element expressions in source order (one walk, at collection)."""
    locals: dict[str, set[str]] = field(default_factory=dict)
    """Function → its parameters and local variables (they shadow file-scope names)."""
    aliases: dict[tuple[str, str], str] = field(default_factory=dict)
    """(function, or "" at file scope; pointer) → the object a pointer declared ``T *p = &obj`` points to."""
    repointed: set[tuple[str, str]] = field(default_factory=set)
    """(function; variable) assigned as a whole somewhere (a pointer re-pointed is no alias)."""
    writes: dict[str, list[Node]] = field(default_factory=dict)
    """Function → its assignment and ``++``/``--`` expressions (what an ISR body writes)."""
    declared: dict[tuple[str, str], Declared] = field(default_factory=dict)
    """(function, or "" at file scope; name) → how the variable or parameter is declared."""

    def lvalue_uses(self, function: FunctionDef) -> list[Node]:
        return self.uses.get(function.name, [])

    def locals_of(self, function: FunctionDef) -> set[str]:
        return self.locals.get(function.name, set())

    def calls_named(self, names: object) -> list[Call]:
        return [c for c in self.calls if c.name in names]  # type: ignore[operator]

    def is_local(self, name: str) -> bool:
        return name in self.functions or name in self.macros

    def function_of(self, call: Call) -> FunctionDef | None:
        return self.functions.get(call.function)

    def alias(self, function: str, name: str) -> str | None:
        """The object ``name`` points to in ``function`` (a local alias, else a file-scope one), or None."""
        if (function, name) in self.aliases and (function, name) not in self.repointed:
            return self.aliases[function, name]
        local = self.locals.get(function, ())
        if name not in local and ("", name) in self.aliases and not any(n == name for _, n in self.repointed):
            return self.aliases["", name]
        return None

    def merge(self, part: Program) -> None:
        """Add one file's facts (first definition of a name wins, in file order)."""
        self.units.extend(part.units)
        for name, function in part.functions.items():
            if name not in self.functions:
                self.functions[name] = function
                self.uses[name] = part.uses.get(name, [])
                self.locals[name] = part.locals.get(name, set())
                self.writes[name] = part.writes.get(name, [])
        self.macros |= part.macros
        self.object_macros.update(part.object_macros)
        self.calls.extend(part.calls)
        self.variables |= part.variables
        for name, var in part.globals.items():
            self.globals.setdefault(name, var)
        self.parse_errors.extend(part.parse_errors)
        for marker, names in part.attribute_functions.items():
            self.attribute_functions.setdefault(marker, set()).update(names)
        self.initializer_fields.extend(part.initializer_fields)
        for key, target in part.aliases.items():
            self.aliases.setdefault(key, target)
        self.repointed |= part.repointed
        for key, declared in part.declared.items():
            self.declared.setdefault(key, declared)

    def declaration(self, function: str, name: str) -> Declared | None:
        """How ``name`` is declared as seen from ``function`` (a local or parameter shadows a file-scope one)."""
        return self.declared.get((function, name)) or self.declared.get(("", name))


def declarator_name(node: Node | None) -> tuple[str | None, bool]:
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


def function_name(definition: Node) -> str | None:
    name, _ = declarator_name(definition.child_by_field_name("declarator"))
    return name


def _parameter_names(definition: Node) -> tuple[str | None, ...]:
    declarator = definition.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    if parameters is None:
        return ()
    return tuple(
        declarator_name(p.child_by_field_name("declarator"))[0]
        for p in parameters.named_children
        if p.type == "parameter_declaration"
    )


def _errors(node: Node) -> list[Node]:
    """ERROR/MISSING nodes under ``node``, descending only into subtrees that contain one."""
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            found.append(current)
        stack.extend(c for c in reversed(current.children) if c.has_error)
    return found


#: Subtrees that hold no call, declaration of interest or initializer: not descended into (their syntax
#: errors are still found through ``has_error``).
_LEAF_SUBTREES = frozenset(
    {
        "enumerator_list",
        "field_declaration_list",
        "comment",
        "string_literal",
        "concatenated_string",
        "number_literal",
        "char_literal",
        "attribute_declaration",
        "attribute_specifier",
    }
)


def _collect(program: Program, unit: Unit) -> None:
    """One walk over the tree: definitions, calls, declarations, initializers and per-function uses."""
    if unit.root.has_error:
        program.parse_errors.extend((unit, node) for node in _errors(unit.root))
    uses: list[Node] | None = None
    stack: list[tuple[Node, str, list[Node] | None]] = [(unit.root, "", None)]
    while stack:
        node, function, uses = stack.pop()
        kind = node.type
        if kind in _LVALUE_NODES:
            if uses is not None:
                uses.append(node)
        elif kind == "call_expression":
            callee = node.child_by_field_name("function")
            if callee is not None and callee.type == "identifier":
                program.calls.append(Call(node_text(unit.src, callee), node, unit, function))
        elif kind == "function_definition":
            name = function_name(node)
            if name:
                if name not in program.functions:
                    program.functions[name] = FunctionDef(name, unit, node, _parameter_names(node))
                function, uses = name, program.uses.setdefault(name, [])
                program.locals.setdefault(name, set())
        elif kind in ("declaration", "parameter_declaration"):
            _collect_declaration(program, unit, node, function)
        elif kind == "initializer_pair":
            designator = node.child_by_field_name("designator")
            value = node.child_by_field_name("value")
            if designator is not None and value is not None and designator.type == "field_designator":
                program.initializer_fields.append((node_text(unit.src, designator).lstrip("."), value, unit, function))
        elif kind == "update_expression":
            program.writes.setdefault(function, []).append(node)
        elif kind == "assignment_expression":
            program.writes.setdefault(function, []).append(node)
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is not None and right is not None:
                if left.type == "field_expression":
                    name_node = left.child_by_field_name("field")
                    if name_node is not None:
                        program.initializer_fields.append((node_text(unit.src, name_node), right, unit, function))
                elif left.type == "identifier":
                    program.repointed.add((function, node_text(unit.src, left)))
        if kind not in _LEAF_SUBTREES:
            stack.extend((child, function, uses) for child in reversed(node.named_children))


def _collect_declaration(program: Program, unit: Unit, node: Node, function: str) -> None:
    declarators = node.children_by_field_name("declarator")
    type_node = node.child_by_field_name("type")
    qualifiers = frozenset(node_text(unit.src, c) for c in node.children if c.type == "type_qualifier")
    for declarator in declarators:
        initialized = declarator.type == "init_declarator"
        target = declarator.child_by_field_name("declarator") if initialized else declarator
        name, is_function = declarator_name(target)
        if not name or is_function:
            continue
        program.variables.add(name)
        if function:
            program.locals.setdefault(function, set()).add(name)
        pointer, dims = _shape(target)
        program.declared.setdefault(
            (function, name),
            Declared(
                type_text=node_text(unit.src, type_node) if type_node is not None else "",
                pointer=pointer or node.type == "parameter_declaration",
                dims=tuple(node_text(unit.src, d) for d in dims),
                unit=unit,
                rows=(node.start_point[0], node.end_point[0]),
            ),
        )
        if initialized and target is not None and target.type == "pointer_declarator":
            pointee = _address_of(declarator.child_by_field_name("value"))
            if pointee is not None:
                program.aliases.setdefault((function, name), pointee)
        if node.type == "declaration" and not function:
            program.globals.setdefault(
                name,
                GlobalVar(
                    name=name,
                    unit=unit,
                    line=node.start_point[0] + 1,
                    type_text=node_text(unit.src, type_node) if type_node is not None else "",
                    qualifiers=qualifiers,
                ),
            )


def _shape(node: Node | None) -> tuple[bool, list[Node]]:
    """(declared through a pointer, array dimension nodes) of a declarator."""
    pointer = False
    dims: list[Node] = []
    while node is not None and node.type not in ("identifier", "field_identifier"):
        if node.type == "pointer_declarator":
            pointer = True
        elif node.type == "array_declarator":
            size = node.child_by_field_name("size")
            if size is not None:
                dims.append(size)
        node = node.child_by_field_name("declarator") or (node.named_children[0] if node.named_children else None)
    return pointer, dims


def _address_of(node: Node | None) -> str | None:
    """The object of an ``&obj`` / ``&obj.field`` / ``&obj[i]`` initializer (casts allowed), else None."""
    while node is not None and node.type in ("parenthesized_expression", "cast_expression"):
        node = node.child_by_field_name("value") if node.type == "cast_expression" else node.named_children[0]
    if node is None or node.type != "pointer_expression":
        return None
    operator = node.child_by_field_name("operator")
    return object_key(node) if operator is not None and operator.type == "&" else None


_UNITS: Memo[tuple[Rules, Program]] = Memo(128)

#: How many macro levels an expansion follows (a macro whose body uses another local macro, and so on).
_MACRO_DEPTH = 4


def _substitute(macro: Macro, args: list[str]) -> str:
    """The macro's body with its parameters replaced by ``args`` (``#x`` stringized, ``a ## b`` pasted)."""
    values: dict[str, str] = {}
    for index, param in enumerate(macro.params or ()):
        if param == "...":
            values["__VA_ARGS__"] = ", ".join(args[index:])
        else:
            values[param] = args[index] if index < len(args) else ""
    if not values:
        return macro.body
    body = re.sub(r"\s*##\s*", "\x00", macro.body)
    pattern = re.compile(r"(?<![#\w])(#\s*)?\b(" + "|".join(map(re.escape, values)) + r")\b")

    def one(match: re.Match[str]) -> str:
        value = values[match.group(2)]
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' if match.group(1) else value

    return pattern.sub(one, body).replace("\x00", "")


def _expand_text(text: str, macros: dict[str, Macro], active: frozenset[str], depth: int, called: set[str]) -> str:
    """Expand the local macros used in ``text`` (nested ones too; a macro never inside itself, as in C).

    ``called`` collects what the expanded bodies call.
    """
    names = [n for n in macros if n not in active and n in text]
    if depth >= _MACRO_DEPTH or not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    pieces: list[str] = []
    at = 0
    while (match := pattern.search(text, at)) is not None:
        macro = macros[match.group(1)]
        pieces.append(text[at : match.start()])
        at = match.end()
        replacement = macro.body
        if macro.params is not None:
            open_at = len(text) - len(text[at:].lstrip())
            close = matching_paren(text, open_at) if text[open_at : open_at + 1] == "(" else None
            if close is None:  # the name alone is no invocation of a function-like macro
                pieces.append(match.group())
                continue
            replacement = _substitute(macro, split_top_level(text[open_at + 1 : close]))
            at = close + 1
        called |= macro.called()
        pieces.append(_expand_text(replacement, macros, active | {macro.name}, depth + 1, called))
    pieces.append(text[at:])
    return "".join(pieces)


def _call_args(node: Node) -> list[Node]:
    arguments = node.child_by_field_name("arguments")
    return [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []


def _sole_expression(root: Node) -> Node | None:
    """The one expression the wrapper function of an expansion holds (parentheses removed), if that is all."""
    definition = root.named_children[0] if root.named_children else None
    body = definition.child_by_field_name("body") if definition is not None else None
    statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
    if not statements or statements[0].type != "expression_statement":
        return None
    node = statements[0].named_children[0] if statements[0].named_children else None
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _expand_uses(part: Program, unit: Unit, macros: dict[str, Macro]) -> None:
    """Add the calls the artifact's own macros make, each located at the macro's use.

    ``#define SAY(x) printk(x)`` then ``SAY("hi")`` in an ISR is a ``printk`` call in that ISR: the
    expansion (arguments substituted, nested local macros expanded) is parsed on its own, and each call the
    macro bodies make becomes a ``Call`` whose node is the use (location, order) and whose arguments are
    read in the expansion. Calls the arguments make are already seen at the use itself.
    """
    uses: list[tuple[Node, str, Macro, str]] = []  # (use, function, macro, argument list of a callee name)
    for call in part.calls:
        macro = macros.get(call.name)
        if macro is None:
            continue
        arguments = call.node.child_by_field_name("arguments")
        if macro.params is None:  # an object-like macro naming the callee: ``LOG("x")`` with ``#define LOG printk``
            uses.append((call.node, call.function, macro, node_text(unit.src, arguments) if arguments else "()"))
        else:
            uses.append((call.node, call.function, macro, ""))
    for function, nodes in part.uses.items():
        for node in nodes:
            macro = macros.get(node.text.decode()) if node.type == "identifier" and node.text else None
            parent = node.parent
            called_by_name = (
                parent is not None
                and parent.type == "call_expression"
                and parent.child_by_field_name("function") == node
            )
            if macro is not None and macro.params is None and "(" in macro.body and not called_by_name:
                uses.append((node, function, macro, ""))
    for node, function, macro, tail in uses:
        # The body is expanded before the arguments go in: calls the arguments make are seen at the use.
        called = set(macro.called())
        body = _expand_text(macro.body, macros, frozenset({macro.name}), 1, called)
        if macro.params is None:
            expanded = body + tail
        else:
            expanded = _substitute(replace(macro, body=body), [node_text(unit.src, a) for a in _call_args(node)])
        wrapper = "void rac_macro_use(void) { " + expanded + "; }"
        root = c_parser().parse(wrapper.encode("utf-8")).root_node
        sole = _sole_expression(root)
        stack = [root]
        while stack:
            current = stack.pop()
            callee = current.child_by_field_name("function") if current.type == "call_expression" else None
            name = callee.text.decode() if callee is not None and callee.type == "identifier" and callee.text else ""
            if name in called and name not in macros:
                part.calls.append(Call(name, node, unit, function, macro.name, current, current == sole))
            stack.extend(reversed(current.named_children))


def _analyse_file(
    path: str,
    text: str,
    rules: Rules,
    attribute_objects: frozenset[str],
    attribute_functions: frozenset[str],
    macros: frozenset[Macro] = frozenset(),
) -> Program:
    """Parse one file and collect its facts (memoized by content; the result is never mutated).

    ``macros``: the artifact's macros (from any of its files) that call something and are used here.
    """
    key = (rules.framework, path, text, attribute_objects, attribute_functions, macros)
    hit = _UNITS.get(key)
    if hit is not None and hit[0] is rules:
        return hit[1]
    prepared = prepare_source(text, rules, attribute_objects, attribute_functions)
    src = prepared.text.encode("utf-8")
    unit = Unit(path, text, src, c_parser().parse(src).root_node)
    part = Program(units=[unit])
    part.macros.update(prepared.defines)
    part.object_macros.update({k: v for k, v in prepared.defines.items() if v is not None})
    _collect(part, unit)
    if macros:
        _expand_uses(part, unit, {m.name: m for m in macros})
    for marker in (m for m in rules.section("isr").get("attribute_markers", ()) if m in text):
        found = re.findall(rf"\b{re.escape(marker)}\b[^;{{}}()]*?\b(\w+)\s*\(", text)
        part.attribute_functions.setdefault(marker, set()).update(found)
    _UNITS.put(key, (rules, part))
    return part


def build_program(files: dict[str, str], rules: Rules) -> Program:
    """Parse every C file of the artifact and collect definitions, calls and declarations.

    Attribute macros a file defines apply in every file (headers are included by the sources), and so do
    the macros whose bodies call something (expanded at their uses: the SDK's own macros never are).
    """
    paths = [p for p in sorted(files) if p.endswith(C_SUFFIXES)]
    stages = [defined_macros(files[p], rules) for p in paths]
    objects = frozenset().union(*(s.attribute_objects for s in stages))
    functions = frozenset().union(*(s.attribute_functions for s in stages))
    defined: dict[str, Macro] = {}
    for stage in stages:
        for name, macro in stage.macros.items():
            defined.setdefault(name, macro)
    calling = calling_macros(defined)
    program = Program()
    for path in paths:
        text = files[path]
        used_objects = frozenset(n for n in objects if n in text)
        used_functions = frozenset(n for n in functions if n in text)
        used = {n for n in calling if n in text}
        reached = used
        while reached:  # and the macros their bodies use, defined wherever
            reached = {n for u in reached for n in calling[u].names() if n in calling} - used
            used |= reached
        used_macros = frozenset(calling[n] for n in used)
        program.merge(_analyse_file(path, text, rules, used_objects, used_functions, used_macros))
    return program



def strip_expression(node: Node | None) -> Node | None:
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
    node = strip_expression(node)
    while node is not None and node.type in ("field_expression", "subscript_expression"):
        node = strip_expression(node.child_by_field_name("argument"))
    if node is not None and node.type == "identifier" and node.text:
        return node.text.decode()
    return None


def finding(code: str, message: str, location: str, objects: list[str], fix: str | None = None) -> Evidence:
    """One failed check as evidence, with the fix (if any) as a described relaxation."""
    return Evidence(
        code=code,
        message=message,
        location=location,
        objects=objects,
        relaxations=[Relaxation(description=fix)] if fix else [],
    )
