"""Static checks of generated C, judged from the source files alone (tree-sitter-c, no preprocessor).

The checks (each failure is located ``Evidence`` naming the file, line and enclosing function):

1. the C parses (no ERROR/MISSING nodes) — ``E_C_PARSE``;
2. every SDK call is known for the framework and version, with the declared number of arguments —
   ``E_UNKNOWN_API``, ``E_API_ARITY``, ``E_DEPRECATED_API``; a call into another framework's API is
   ``E_FOREIGN_API``;
3. required calls come first on the same object (init → configure → start, readiness before use) —
   ``E_CALL_ORDER``/``E_CALL_MISSING``; STM32 peripheral clocks are enabled — ``E_CLOCK_NOT_ENABLED``;
   forbidden calls (disabling a watchdog) — ``E_FORBIDDEN_CALL``; on a core with a D-cache, each DMA
   source buffer is cleaned before its start and each destination invalidated on the completion path,
   over the whole transfer — ``E_CACHE_FLUSH_MISSING``, ``E_CACHE_INVALIDATE_MISSING``, ``E_CACHE_ORDER``,
   ``E_CACHE_RANGE``;
4. interrupt-context bodies neither block, sleep, log, allocate nor call thread-only APIs —
   ``E_ISR_BLOCKING``, ``E_ISR_LOGGING``, ``E_ISR_ALLOCATION``, ``E_ISR_UNSAFE_CALL``;
5. file-scope state written in interrupt context and used by thread code is volatile or atomic —
   ``E_ISR_SHARED_NOT_VOLATILE``;
6. results of fallible calls are tested — ``E_UNCHECKED_RETURN``.

What the "preprocessing-lite" does before tree-sitter sees a file (line numbers never move): ``#define``
lines are collected and blanked; GNU ``__attribute__((…))`` and the framework's attribute macros are
blanked (their arguments — ``section(".x")``, ``aligned(32)`` — are not calls); an asm register label
(``register uint32_t r0 __asm__("r0") = …``) is blanked; conditional groups testing only ``__cplusplus``
are resolved with ``__cplusplus`` undefined (the ``extern "C" {`` guard of a header), everything else is
left to the parser.

Objects and call order: a prerequisite must come first *on the same object*. The object is the argument's
base variable (``&huart3`` → ``huart3``); a local pointer initialized with ``&obj`` (and never re-pointed)
stands for ``obj``. When the argument is a *parameter* of the enclosing helper, the object is the caller's:
the call graph is followed to every call site of the helper (up to four levels), and the order is judged
there, at the position of the call into the helper. A parameter of a function no artifact code calls
(a HAL callback, a registered handler) names an object the SDK passes in: then only the presence of the
prerequisite somewhere in the artifact is judged.

Macros the artifact itself defines (in any of its files) are expanded at their uses for call analysis:
``#define SAY(x) printk(x)`` makes ``SAY("hi")`` a ``printk`` call located at the use (arguments
substituted, ``#``/``##`` applied, nested local macros followed). The SDK's macros are never expanded: the
catalogs judge them as the APIs they are.

Known limits (documented, deliberate): conditional compilation other than ``__cplusplus`` is not
evaluated (both branches are judged), ordering across functions is judged only through calls of helpers
(a prerequisite in an unrelated function counts as present), writes to array elements are not treated as
shared scalar state (lock-free rings keep their indices atomic instead), and a DMA buffer is named only
through a start call's arguments or Zephyr's block configuration (bare-metal stream registers are not
read: those artifacts leave the Cortex-M7 D-cache off, its reset state).
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

import tree_sitter_c
from tree_sitter import Language, Node, Parser

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.verify.sdk import ApiEntry, Catalog, OrderRule, Rules, StdLib, split_top_level

_LANGUAGE = Language(tree_sitter_c.language())

#: File suffixes parsed as C.
C_SUFFIXES = (".c", ".h")

_LVALUE_NODES = frozenset({"identifier", "field_expression", "pointer_expression", "subscript_expression"})

_ATOMIC_TYPES = re.compile(r"^(atomic_\w+|atomic_t|_Atomic\b.*|std::atomic.*)$")

#: GNU C attribute keywords: blanked with their argument list in every framework.
_GNU_ATTRIBUTES = ("__attribute__", "__attribute")


_THREAD = threading.local()


def _parser() -> Parser:
    """This thread's parser: a tree-sitter ``Parser`` must not be shared between threads (MCP sessions)."""
    parser: Parser | None = getattr(_THREAD, "parser", None)
    if parser is None:
        parser = _THREAD.parser = Parser(_LANGUAGE)
    return parser


def _text(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


# --------------------------------------------------------------------------------------------------
# Preprocessing-lite: make the file tree-sitter-parseable without moving any line.
# --------------------------------------------------------------------------------------------------


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """Replace each ``[start, end)`` span by spaces, keeping newlines: every line and offset stays put."""
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _blank_words(text: str, names: list[str]) -> str:
    """Blank whole-word occurrences of ``names`` (``str.find`` scans: faster than a ``\\b`` alternation)."""
    spans: list[tuple[int, int]] = []
    for name in names:
        at = text.find(name)
        while at != -1:
            end = at + len(name)
            if (at == 0 or not _is_word(text[at - 1])) and (end == len(text) or not _is_word(text[end])):
                spans.append((at, end))
            at = text.find(name, end)
    return _blank_spans(text, spans)


def _matching_paren(text: str, open_at: int) -> int | None:
    """Offset of the ``)`` closing the ``(`` at ``open_at`` (string and char literals skipped), or None.

    None (unbalanced) makes the caller leave the text alone, so tree-sitter reports the real syntax error
    instead of the blanking hiding the rest of the file.
    """
    depth = 0
    i, end = open_at, len(text)
    while i < end:
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        elif ch in "\"'":
            i += 1
            while i < end and text[i] != ch and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
        i += 1
    return None


def _strip_calls(text: str, names: list[str], keep_argument: bool) -> str:
    """Blank ``NAME(...)`` — or, with ``keep_argument``, only ``NAME(`` and its ``)`` — keeping offsets."""
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    spans: list[tuple[int, int]] = []
    for match in pattern.finditer(text):
        close = _matching_paren(text, match.end() - 1)
        if close is None:
            continue
        if keep_argument:
            spans += [(match.start(), match.end()), (close, close + 1)]
        else:
            spans.append((match.start(), close + 1))
    return _blank_spans(text, spans)


#: A ``#define`` continued over backslash-newlines, and one ``# define`` line spelled with inner blanks.
_DEFINE_CONTINUED = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\()?([^\n\\]*(?:\\[\s\S][^\n\\]*)+)", re.M)
_DEFINE_SPACED = re.compile(r"[ \t]*#[ \t]*define[ \t]+(\w+)(\(?)(.*)")

#: An asm register label between a declarator and its initializer: ``r0 __asm__("r0") =``. tree-sitter-c
#: parses the label but not an initializer after it; the label names a register, nothing to judge. The
#: pattern starts at the literal ``asm`` (fast scan); a leading ``__`` is blanked with it.
_ASM_LABEL = re.compile(r"asm(?:__)?[ \t]*\([ \t]*\"[^\"\n]*\"[ \t]*\)(?=[ \t]*=)")


def _blank_asm_labels(text: str) -> str:
    spans: list[tuple[int, int]] = []
    for match in _ASM_LABEL.finditer(text):
        start = match.start() - 2 if text[match.start() - 2 : match.start()] == "__" else match.start()
        if start == 0 or not _is_word(text[start - 1]):
            spans.append((start, match.end()))
    return _blank_spans(text, spans)


_LEADING_WORD = re.compile(r"\w+")

_CONDITIONAL = re.compile(r"[ \t]*#[ \t]*(ifdef|ifndef|if|elif|else|endif)\b(.*)")
#: ``#if defined(__cplusplus)`` / ``#if !defined __cplusplus`` (a trailing comment allowed).
_CPLUSPLUS_IF = re.compile(r"\s*(!?)\s*defined\s*(?:\(\s*__cplusplus\s*\)|\s__cplusplus)\s*(?:/[/*].*)?")
_CPLUSPLUS_NAME = re.compile(r"\s*__cplusplus\s*(?:/[/*].*)?")


@dataclass
class _Group:
    """One conditional group while resolving ``__cplusplus`` (see ``_without_cplusplus``)."""

    cplusplus: bool
    """The group tests ``__cplusplus`` alone (its directives are resolved and blanked)."""
    active: bool
    """The current branch is kept."""
    taken: bool = False
    """A branch of a ``__cplusplus`` group has already been kept (later ones are dropped)."""
    rewritten: bool = False
    """An ``#elif`` after a false ``__cplusplus`` test became ``#if``: the rest is left to the parser."""


def _cplusplus_test(word: str, rest: str) -> bool | None:
    """The value of a conditional that tests only ``__cplusplus`` (undefined in C), else None."""
    if word in ("ifdef", "ifndef"):
        return word == "ifndef" if _CPLUSPLUS_NAME.fullmatch(rest) else None
    match = _CPLUSPLUS_IF.fullmatch(rest)
    return None if match is None else bool(match.group(1))


def _without_cplusplus(text: str) -> str:
    """Resolve conditional groups testing ``__cplusplus`` as a C compiler does, keeping every line.

    A header's ``#ifdef __cplusplus / extern "C" { / #endif … #ifdef __cplusplus / } / #endif`` is
    balanced only after preprocessing; tree-sitter keeps both branches and sees an unclosed brace. Lines of
    dropped branches and the resolved directives become empty; other conditionals are left untouched.
    """
    lines = text.split("\n")
    stack: list[_Group] = []
    dropping = False
    for index, line in enumerate(lines):
        match = _CONDITIONAL.match(line) if "#" in line else None
        if match is None:
            if dropping:
                lines[index] = ""
            continue
        word, rest = match.groups()
        group = stack[-1] if stack else None
        if word in ("if", "ifdef", "ifndef"):
            value = None if dropping else _cplusplus_test(word, rest)
            stack.append(_Group(cplusplus=value is not None, active=value is not False, taken=bool(value)))
            if value is not None or dropping:
                lines[index] = ""
        elif group is None:
            continue  # an unbalanced directive: the parser reports it
        elif word == "endif":
            stack.pop()
            if dropping or (group.cplusplus and not group.rewritten):
                lines[index] = ""
        elif not group.cplusplus or group.rewritten:
            if dropping:
                lines[index] = ""
        elif group.taken:
            group.active = False
            lines[index] = ""
        elif word == "else":
            group.active = group.taken = True
            lines[index] = ""
        else:  # ``#elif COND`` after a false ``__cplusplus`` test: it is the group's real ``#if``.
            lines[index] = line.replace("elif", "if", 1)
            group.active = group.rewritten = True
        dropping = not all(g.active for g in stack)
    return "\n".join(lines)


@dataclass(frozen=True)
class Prepared:
    """A source file ready for tree-sitter, and the macros it defines."""

    text: str
    """The text with ``#define`` lines, attributes and C++-only branches blanked (line structure unchanged)."""
    defines: dict[str, str | None]
    """Macro name → body of an object-like macro, or None for a function-like one."""


#: A name followed by ``(`` in a macro body: a call, unless it is a keyword or operator.
_BODY_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NOT_CALLS = frozenset(
    {"if", "while", "for", "switch", "return", "sizeof", "_Alignof", "alignof", "__typeof__", "typeof", "defined"}
    | set(_GNU_ATTRIBUTES)
)


@dataclass(frozen=True)
class Macro:
    """A macro the artifact defines whose body calls something: expanded at its uses for call analysis."""

    name: str
    params: tuple[str, ...] | None
    """Parameter names (``...`` for a variadic tail); None for an object-like macro."""
    body: str

    def names(self) -> set[str]:
        """Every name the body mentions (the other macros its expansion may need)."""
        return set(re.findall(r"[A-Za-z_]\w*", self.body))

    def called(self) -> set[str]:
        """Names the body itself calls (not those its arguments bring in); an object-like macro that is
        a bare name (``#define LOG printk``) calls it where it is used as a callee."""
        if self.params is None and self.body.isidentifier():
            return {self.body} - _NOT_CALLS
        return {m.group(1) for m in _BODY_CALL.finditer(self.body)} - _NOT_CALLS - set(self.params or ())


def _macro(name: str, function_like: bool, text: str) -> Macro | None:
    """The macro when its body may call something: any function-like macro, an object-like one whose body
    holds a parenthesis or is a bare name (which of them really call is settled over all files)."""
    params: tuple[str, ...] | None = None
    if function_like:
        if ")" not in text:
            return None
        head, text = text.split(")", 1)
        params = tuple(p.strip() for p in head.split(",") if p.strip())
    text = text.strip()
    return Macro(name, params, text) if function_like or "(" in text or text.isidentifier() else None


def _calling(macros: dict[str, Macro]) -> dict[str, Macro]:
    """The macros whose expansion calls something: their body calls a non-macro, or uses such a macro."""
    words = {name: m.names() for name, m in macros.items()}
    kept = {name for name, m in macros.items() if m.called() - macros.keys()}
    grown = kept
    while grown:
        grown = {name for name in macros if name not in kept and words[name] & kept}
        kept |= grown
    return {name: macros[name] for name in kept}


def _take_defines(
    text: str, attributes: frozenset[str]
) -> tuple[str, dict[str, str | None], set[str], set[str], dict[str, Macro]]:
    """Collect ``#define``s and blank their lines: macro bodies are not C tree-sitter can judge.

    Returns the text, name → object-like body (None: function-like), the local object-like and
    function-like macros whose body is an attribute (``__attribute__`` or one of ``attributes``), and the
    macros whose body calls something (expanded at their uses, see ``_expand_uses``).
    Generated register headers are thousands of one-line defines: those are split with ``str`` methods,
    line by line (about twice as fast as a multi-line regex plus a substitution pass).
    """
    defines: dict[str, str | None] = {}
    attr_objects: set[str] = set()
    attr_functions: set[str] = set()
    calling: dict[str, Macro] = {}

    def note(name: str, function_like: bool, body: str) -> None:
        macro = _macro(name, function_like, body)
        if macro is not None:
            calling[name] = macro
        if function_like:
            defines[name] = None
            body = body.split(")", 1)[1] if ")" in body else ""
        else:
            defines[name] = body = body.strip()
        head = _LEADING_WORD.match(body.lstrip()) if "__" in body else None
        if head is not None and head.group() in attributes:
            (attr_functions if function_like else attr_objects).add(name)

    def blank(match: re.Match[str]) -> str:
        note(match.group(1), bool(match.group(2)), match.group(3).replace("\\\n", " "))
        return "\n" * match.group(0).count("\n")

    if "\\" in text:
        text = _DEFINE_CONTINUED.sub(blank, text)
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if "#" not in line:
            continue
        parts = line.split(None, 2)
        if len(parts) > 1 and parts[0] == "#define":
            name, paren, _ = parts[1].partition("(")
            if paren:  # the parameters and body after ``NAME(``
                body = line[line.index(parts[1], line.index("#define") + 7) + len(name) + 1 :]
            else:
                body = parts[2] if len(parts) > 2 else ""
        elif parts and parts[0].startswith("#") and (spaced := _DEFINE_SPACED.match(line)):
            name, paren, body = spaced.groups()
        else:
            continue
        lines[index] = ""
        if paren or "__" in body or "(" in body or body.strip().isidentifier():
            note(name, bool(paren), body)
        else:
            defines[name] = body.strip()
    return "\n".join(lines), defines, attr_objects, attr_functions, calling


_Value = TypeVar("_Value")


class _Memo(Generic[_Value]):
    """A bounded, thread-safe per-process memo (the oldest entry goes first).

    Regenerated artifacts repeat most files byte for byte (device headers, startup code, the HAL
    configuration), so keyed by content, a warm verification re-reads only what changed.
    """

    def __init__(self, size: int):
        self._size = size
        self._entries: dict[tuple[object, ...], _Value] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> _Value | None:
        return self._entries.get(key)

    def put(self, key: tuple[object, ...], value: _Value) -> None:
        with self._lock:
            if len(self._entries) >= self._size:
                del self._entries[next(iter(self._entries))]
            self._entries[key] = value


@dataclass(frozen=True)
class _Defined:
    """A file after the first preprocessing step: ``__cplusplus`` resolved, ``#define`` lines blanked."""

    rules: Rules
    text: str
    defines: dict[str, str | None]
    attribute_objects: frozenset[str]
    """Object-like macros this file defines as an attribute (``#define DMA __attribute__((…))``)."""
    attribute_functions: frozenset[str]
    """Function-like macros this file defines as an attribute (``#define SECTION(s) __attribute__((…))``)."""
    macros: dict[str, Macro]
    """Macros this file defines whose body calls something."""


_DEFINED: _Memo[_Defined] = _Memo(256)


def _defined(text: str, rules: Rules) -> _Defined:
    key = (rules.framework, text)
    hit = _DEFINED.get(key)
    if hit is not None and hit.rules is rules:
        return hit
    source = rules.section("source")
    if "__cplusplus" in text:
        text = _without_cplusplus(text)
    attributes = frozenset(source.get("attribute_macros", ())) | frozenset(source.get("attribute_calls", ()))
    out, defines, objects, functions, calling = _take_defines(text, attributes | frozenset(_GNU_ATTRIBUTES))
    result = _Defined(rules, out, defines, frozenset(objects), frozenset(functions), calling)
    _DEFINED.put(key, result)
    return result


def prepare_source(
    text: str,
    rules: Rules,
    attribute_objects: frozenset[str] = frozenset(),
    attribute_functions: frozenset[str] = frozenset(),
) -> Prepared:
    """Blank the file's ``#define`` lines, attributes, asm labels and C++-only branches (same lines).

    ``attribute_objects`` / ``attribute_functions``: attribute macros defined in the artifact's other files
    (a header's ``#define APP_DMA(name) __attribute__((section(name)))`` used in a ``.c``).
    """
    source = rules.section("source")
    stage = _defined(text, rules)
    out = stage.text
    attribute_macros = [*source.get("attribute_macros", ()), *stage.attribute_objects, *attribute_objects]
    attribute_calls = [*_GNU_ATTRIBUTES, *source.get("attribute_calls", ())]
    attribute_calls += [*stage.attribute_functions, *attribute_functions]
    out = _strip_calls(out, sorted({n for n in attribute_calls if n in out}), keep_argument=False)
    out = _strip_calls(out, [n for n in source.get("wrapper_calls", ()) if n in out], keep_argument=True)
    out = _blank_words(out, sorted({n for n in attribute_macros if n in out}))
    if "asm" in out:
        out = _blank_asm_labels(out)
    expand = {k: v for k, v in (source.get("expand_macros") or {}).items() if k in out}
    if expand:
        out = re.sub(r"\b(" + "|".join(map(re.escape, expand)) + r")\b", lambda m: expand[m.group(1)], out)
    return Prepared(out, stage.defines)


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


def _function_name(definition: Node) -> str | None:
    name, _ = _declarator_name(definition.child_by_field_name("declarator"))
    return name


def _parameter_names(definition: Node) -> tuple[str | None, ...]:
    declarator = definition.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    if parameters is None:
        return ()
    return tuple(
        _declarator_name(p.child_by_field_name("declarator"))[0]
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
                program.calls.append(Call(_text(unit.src, callee), node, unit, function))
        elif kind == "function_definition":
            name = _function_name(node)
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
                program.initializer_fields.append((_text(unit.src, designator).lstrip("."), value, unit, function))
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
                        program.initializer_fields.append((_text(unit.src, name_node), right, unit, function))
                elif left.type == "identifier":
                    program.repointed.add((function, _text(unit.src, left)))
        if kind not in _LEAF_SUBTREES:
            stack.extend((child, function, uses) for child in reversed(node.named_children))


def _collect_declaration(program: Program, unit: Unit, node: Node, function: str) -> None:
    declarators = node.children_by_field_name("declarator")
    type_node = node.child_by_field_name("type")
    qualifiers = frozenset(_text(unit.src, c) for c in node.children if c.type == "type_qualifier")
    for declarator in declarators:
        initialized = declarator.type == "init_declarator"
        target = declarator.child_by_field_name("declarator") if initialized else declarator
        name, is_function = _declarator_name(target)
        if not name or is_function:
            continue
        program.variables.add(name)
        if function:
            program.locals.setdefault(function, set()).add(name)
        pointer, dims = _shape(target)
        program.declared.setdefault(
            (function, name),
            Declared(
                type_text=_text(unit.src, type_node) if type_node is not None else "",
                pointer=pointer or node.type == "parameter_declaration",
                dims=tuple(_text(unit.src, d) for d in dims),
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
                    type_text=_text(unit.src, type_node) if type_node is not None else "",
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


_UNITS: _Memo[tuple[Rules, Program]] = _Memo(128)

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
            close = _matching_paren(text, open_at) if text[open_at : open_at + 1] == "(" else None
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
            uses.append((call.node, call.function, macro, _text(unit.src, arguments) if arguments else "()"))
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
            expanded = _substitute(replace(macro, body=body), [_text(unit.src, a) for a in _call_args(node)])
        wrapper = "void rac_macro_use(void) { " + expanded + "; }"
        root = _parser().parse(wrapper.encode("utf-8")).root_node
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
    unit = Unit(path, text, src, _parser().parse(src).root_node)
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
    stages = [_defined(files[p], rules) for p in paths]
    objects = frozenset().union(*(s.attribute_objects for s in stages))
    functions = frozenset().union(*(s.attribute_functions for s in stages))
    defined: dict[str, Macro] = {}
    for stage in stages:
        for name, macro in stage.macros.items():
            defined.setdefault(name, macro)
    calling = _calling(defined)
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


def finding(code: str, message: str, location: str, objects: list[str], fix: str | None = None) -> Evidence:
    """One failed check as evidence, with the fix (if any) as a described relaxation."""
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
        found.append(finding("E_C_PARSE", f"C syntax error: {what}", unit.location(node, function), [unit.path]))
    return found


# --------------------------------------------------------------------------------------------------
# Check 2: every SDK call is known, with the right arity, for this framework and version.
# --------------------------------------------------------------------------------------------------


def _suggest(name: str, catalog: Catalog) -> list[str]:
    import difflib  # only a failing artifact needs suggestions: keep it off the clean path's import cost

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
                    finding(
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
                    finding(
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
                finding(
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
            finding(
                "E_UNKNOWN_API",
                f"{call.label} is not declared by {catalog.label} {catalog.version}, the C standard library, nor "
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


@dataclass(frozen=True)
class _Site:
    """Where a call acts on an object: at the SDK call itself, or at a call into the helper that makes it."""

    key: str | None
    """The object (None: unknown, only the presence of a prerequisite can be judged)."""
    call: Call
    """The call at this position: the SDK call, or the call of the helper in a caller."""
    origin: Call
    """The SDK call."""
    parameter: bool = False
    """``key`` is a parameter of the enclosing function: it names an object only within that function."""
    path: tuple[int, ...] = ()
    """Byte offsets from ``call`` inwards to ``origin`` (through each helper): sites in one function order
    lexicographically, so two calls made inside one helper call keep the helper's own order."""

    def same_object(self, other: _Site) -> bool:
        if self.key != other.key or self.parameter != other.parameter:
            return False
        return not self.parameter or (self.call.function == other.call.function and self.call.unit is other.call.unit)

    def describe(self) -> str:
        if self.call is self.origin:
            return f"{self.origin.name} (line {self.origin.line})"
        return f"{self.origin.name} (line {self.call.line}, through {self.call.name}())"


#: How many helper levels a parameter is followed up the call graph.
_MAX_HELPER_DEPTH = 4


def _callers(program: Program) -> dict[str, list[Call]]:
    """Local function → the calls of it made by other artifact functions."""
    found: dict[str, list[Call]] = {}
    for call in program.calls:
        if call.name in program.functions and call.name != call.function:
            found.setdefault(call.name, []).append(call)
    return found


def _site(program: Program, call: Call, key: str | None, origin: Call) -> _Site:
    """The site of ``call`` on ``key`` (a local ``T *p = &obj`` pointer standing for ``obj``).

    ``NULL`` names no object: a helper called with it is judged on presence only.
    """
    path = (call.node.start_byte,) if call is origin else ()
    if key is None or key == "NULL":
        return _Site(None, call, origin, path=path)
    key = program.alias(call.function, key) or key
    function = program.functions.get(call.function)
    return _Site(key, call, origin, function is not None and key in function.parameters, path)


def _caller_sites(program: Program, callers: dict[str, list[Call]], site: _Site, depth: int = 0) -> list[_Site]:
    """Where the object a helper's *parameter* names comes from: the argument at each call of the helper.

    Followed up to ``_MAX_HELPER_DEPTH`` levels; [] when the helper is called by no artifact code (a
    callback the SDK calls) — the object is then the SDK's, unknown here.
    """
    function = program.functions[site.call.function]
    index = function.parameters.index(site.key)
    if depth >= _MAX_HELPER_DEPTH:
        return []
    found: list[_Site] = []
    for call in callers.get(function.name, ()):
        outer = _site(program, call, object_key(call.arg_node(index)) if index < len(call.args) else None, site.origin)
        outer = replace(outer, path=(call.node.start_byte, *site.path))
        found.extend(_caller_sites(program, callers, outer, depth + 1) if outer.parameter else [outer])
    return found


def check_order(program: Program, rules: Rules) -> list[Evidence]:
    """Prerequisites first, on the same object (see the module docstring for how objects are resolved)."""
    found: list[Evidence] = []
    reported: set[tuple[str, str, str | None]] = set()
    callers = _callers(program)
    names = {call.name for call in program.calls}
    for rule in rules.order:

        def key_of(call: Call, rule: OrderRule = rule) -> str | None:
            return None if rule.key is None else object_key(call.arg_node(rule.key_index(call.name)))

        # Each distinct name is matched against the rule once (patterns are regexes), calls by set look-up.
        first_names = rule.first.select(names)
        then_names = rule.then.select(names) - first_names
        if not then_names:
            continue
        firsts: list[_Site] = []
        for call in program.calls:
            if call.name in first_names:
                own = _site(program, call, key_of(call), call)
                firsts.append(own)
                if own.parameter:
                    firsts.extend(_caller_sites(program, callers, own))
        defined = _defined_objects(program, rule.defined_by) if rule.defined_by else set()
        for call in program.calls:
            if call.name not in then_names:
                continue
            own = _site(program, call, key_of(call), call)
            sites = [own]
            if own.parameter and _judge(own, firsts, defined) == ("missing", None):
                # The helper's parameter names the caller's object: judge it where the helper is called.
                sites = _caller_sites(program, callers, own) or [replace(own, key=None, parameter=False)]
            for site in sites:
                verdict, first = _judge(site, firsts, defined)
                marker = (call.name, site.call.location, site.key)
                if (
                    verdict == "ok"
                    or marker in reported
                    or (verdict == "missing" and not rule.required)
                    or (verdict == "order" and not rule.ordered)
                ):
                    continue
                reported.add(marker)
                found.append(_order_evidence(site, first, rule))
    return found


def _judge(site: _Site, firsts: list[_Site], defined: set[str]) -> tuple[str, _Site | None]:
    """``ok``; ``order`` with the prerequisite that comes later in the same function; or ``missing``."""
    if site.key is not None and site.key in defined and not site.parameter:
        return "ok", None
    matching = [f for f in firsts if site.key is None or site.same_object(f)]
    same = [f for f in matching if f.call.function == site.call.function and f.call.unit is site.call.unit]
    if any(f.path < site.path for f in same):
        return "ok", None
    if same:
        return "order", same[0]
    return ("ok", None) if matching else ("missing", None)


def _order_evidence(site: _Site, first: _Site | None, rule: OrderRule) -> Evidence:
    """E_CALL_ORDER when ``first`` (the late prerequisite) is given, else E_CALL_MISSING."""
    call, key = site.origin, site.key
    wanted = " or ".join(rule.first_names)
    on = f" on {key}" if key else ""
    used = f"{call.name}{on}"
    if site.call is not call:
        via = "" if site.call.name == call.function else f", reached through {site.call.name}()"
        used += f" (in {call.function}() at line {call.line}{via})"
    if first is not None:
        return finding(
            "E_CALL_ORDER",
            f"{used} is called before {first.describe()}; {wanted} must come first",
            site.call.location,
            [call.name, first.origin.name] + ([key] if key else []),
            f"call {wanted} before {call.name}",
        )
    return finding(
        "E_CALL_MISSING",
        f"{used} is used but {wanted} is never called{on} in the artifact",
        site.call.location,
        [call.name, *rule.first_names] + ([key] if key else []),
        f"call {wanted}{on} before {call.name}",
    )


def check_forbidden(program: Program, rules: Rules) -> list[Evidence]:
    forbidden = rules.section("forbidden")
    return [
        finding("E_FORBIDDEN_CALL", f"{call.name}: {forbidden[call.name]}", call.location, [call.name])
        for call in program.calls
        if call.name in forbidden and not program.is_local(call.name)
    ]


def _instance_base(name: str) -> tuple[str, set[str]]:
    trimmed = re.sub(r"_(Stream|Channel)\d+$", "", name)
    return re.sub(r"\d+", "", trimmed), set(re.sub(r"\D", "", trimmed))


_GATED: dict[tuple[int, str], frozenset[str]] = {}


def _gated_bases(catalog: Catalog, macro: str) -> frozenset[str]:
    """Peripheral kinds (``USART``, ``GPIOB``, ``ADC``) that have a clock-enable macro in this catalog.

    Selected by prefix and suffix (plain string tests over the catalog's thousands of names, no regex).
    """
    key = (id(catalog), macro)
    if key not in _GATED:
        prefix, suffix = macro.split("{}")
        cut = len(suffix)
        _GATED[key] = frozenset(
            _instance_base(name[len(prefix) : len(name) - cut])[0]
            for name in catalog.entries
            if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix) + cut
        )
    return _GATED[key]


def check_clocks(program: Program, rules: Rules, catalog: Catalog) -> list[Evidence]:
    """STM32: every peripheral instance a handle uses, and every GPIO port touched, has its clock on.

    A GPIO port's clock must also be enabled *before* the pin is written or initialized when both happen
    in the same function (writes to an unclocked port are lost).
    """
    spec = rules.section("clock_enable")
    if not spec:
        return []
    field_name = spec["instance_field"]
    pattern = re.compile("^" + re.escape(spec["macro"]).replace(r"\{\}", r"(\w+?)") + "$")
    gated_bases = _gated_bases(catalog, spec["macro"])
    enables = [(m.group(1), call) for call in program.calls if (m := pattern.match(call.name))]
    uses: list[tuple[str, str, Call | None]] = []
    for name, value, unit, function in program.initializer_fields:
        if name == field_name and value.type == "identifier" and value.text:
            uses.append((value.text.decode(), unit.location(value, function), None))
    for gpio in program.calls:
        if gpio.name in spec.get("gpio_calls", ()):
            port = object_key(gpio.arg_node(0))
            if port:
                body = program.object_macros.get(port, "").strip()
                uses.append((body if body.isidentifier() else port, gpio.location, gpio))
    found: list[Evidence] = []
    for instance, location, call in uses:
        base, digits = _instance_base(instance)
        if base not in gated_bases:
            continue
        macro = spec["macro"].format(instance)
        on = [e for name, e in enables if _instance_base(name)[0] == base and digits <= _instance_base(name)[1]]
        here = [e for e in on if call is not None and e.function == call.function and e.unit is call.unit]
        if not on:
            problem = f"its bus clock is never enabled ({macro} or the family's equivalent is not called)"
        elif call is not None and here and all(e.node.start_byte > call.node.start_byte for e in here):
            problem = f"its bus clock is enabled only afterwards ({here[0].name}, line {here[0].line})"
        else:
            continue
        found.append(
            finding(
                "E_CLOCK_NOT_ENABLED",
                f"{instance} is used{f' by {call.name}' if call else ''} but {problem}",
                location,
                [instance, macro],
                f"call {macro}() before the peripheral or port is first used",
            )
        )
    return found


# DMA cache maintenance, judged per buffer.
#
# A transfer's buffers come from its start call: the HAL's ``HAL_DMA_Start(hdma, src, dst, len)`` and
# friends name them as arguments (``dma_cache.transfers`` in the rules say which), Zephyr's ``dma_start``
# takes them from the ``struct dma_block_config`` that the matching ``dma_config`` call's configuration
# heads. A *source* must be cleaned before the start, a *destination* invalidated on the completion path
# (after a wait, a flag test or in a callback, before the buffer is read), each with a size that covers
# the transfer. A buffer the check cannot name (a pointer, an unresolved helper parameter) keeps the
# weaker presence judgement: some clean before the start, some invalidate after it.

#: A maintenance call that may cover any buffer: a whole-cache operation, or an address the check cannot
#: tie to one object (never a false alarm).
_ANY = "*"

#: Sizes in bytes of the scalar types buffers are declared with, on the 32-bit cores rac-fw targets.
_TYPE_BYTES = {
    **dict.fromkeys(("char", "signed char", "unsigned char", "uint8_t", "int8_t", "bool", "_Bool"), 1),
    **dict.fromkeys(("short", "unsigned short", "uint16_t", "int16_t"), 2),
    **dict.fromkeys(("int", "unsigned", "unsigned int", "long", "unsigned long", "uint32_t", "int32_t"), 4),
    **dict.fromkeys(("float", "size_t", "uintptr_t"), 4),
    **dict.fromkeys(("long long", "unsigned long long", "uint64_t", "int64_t", "double"), 8),
}

_SIZEOF = re.compile(r"\bsizeof\s*(?:\(\s*([^()]+?)\s*\)|\s+(\w+))")
#: A cast in a size expression (``(int32_t)sizeof(x)``, ``(size_t)N``): it does not change the value.
_SIZE_CAST = re.compile(r"\(\s*(?:const\s+)?(?:(?:un)?signed\s+)?[A-Za-z_]\w*\s*\**\s*\)(?=\s*[\w(])")
_INTEGER = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b")
_ARITHMETIC: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.LShift: lambda a, b: a << b,
}
_LOOPS = frozenset({"for_statement", "while_statement", "do_statement"})


def _arithmetic(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_arithmetic(node.left), _arithmetic(node.right))
    raise ValueError("not a constant")


def _c_integer(digits: str) -> int:
    """A C integer literal's value (hexadecimal, octal with a leading 0, or decimal; suffix removed)."""
    if digits[:2] in ("0x", "0X"):
        return int(digits, 16)
    return int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits)


def _sizeof(program: Program, function: str, operand: str, depth: int) -> int | None:
    """``sizeof(operand)``: a scalar type, or a declared object (elements of a subscript) of one."""
    operand = " ".join(operand.split())
    if operand in _TYPE_BYTES:
        return _TYPE_BYTES[operand]
    match = re.fullmatch(r"(\w+)\s*((?:\[[^\]]*\]\s*)*)", operand)
    declared = program.declaration(function, match.group(1)) if match else None
    if match is None or declared is None or declared.pointer:
        return None
    size = _TYPE_BYTES.get(" ".join(declared.type_text.split()))
    for dim in declared.dims[match.group(2).count("[") :]:
        count = _evaluate(program, function, dim, depth + 1)
        size = None if size is None or count is None else size * count
    return size


def _evaluate(program: Program, function: str, text: str, depth: int = 0) -> int | None:
    """The value of a constant size expression — integer literals, the artifact's object-like macros,
    ``sizeof`` of declared objects and scalar types, casts, ``+ - * / <<`` — or None (not comparable)."""
    if depth > 4:
        return None
    unknown = False

    def size_of(match: re.Match[str]) -> str:
        nonlocal unknown
        value = _sizeof(program, function, match.group(1) or match.group(2), depth)
        unknown = unknown or value is None
        return str(value)

    def macro(match: re.Match[str]) -> str:
        nonlocal unknown
        body = program.object_macros.get(match.group())
        value = None if body is None else _evaluate(program, function, body, depth + 1)
        unknown = unknown or value is None
        return f"({value})"

    text = _SIZE_CAST.sub("", _SIZEOF.sub(size_of, text))
    text = re.sub(r"\b[A-Za-z_]\w*\b", macro, text)
    if unknown:
        return None
    try:
        text = _INTEGER.sub(lambda m: str(_c_integer(m.group(1))), text)
        return _arithmetic(ast.parse(text.replace("/", "//"), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _plain(node: Node | None) -> str:
    """An expression's text without casts, parentheses or blanks (``(uint32_t) ch`` → ``ch``)."""
    while node is not None and node.type in ("parenthesized_expression", "cast_expression"):
        node = node.child_by_field_name("value") if node.type == "cast_expression" else node.named_children[0]
    return re.sub(r"\s+", "", node.text.decode()) if node is not None and node.text else ""


@dataclass(frozen=True)
class _Side:
    """One buffer of a DMA transfer, as the start call (or the configuration it starts) names it."""

    role: str
    """``source`` (the DMA reads it: clean before the start) or ``dest`` (it writes it: invalidate after)."""
    node: Node | None
    function: str
    """The function the buffer and length expressions are written in (their names resolve there)."""
    length: Node | None


def _field_owner(value: Node) -> str | None:
    """The struct variable a designated initializer or a field assignment sets (``block`` of ``block.x = v``)."""
    parent = value.parent
    if parent is not None and parent.type == "assignment_expression":
        left = parent.child_by_field_name("left")
        return object_key(left.child_by_field_name("argument")) if left and left.type == "field_expression" else None
    holder = parent.parent if parent is not None and parent.type == "initializer_pair" else None
    declarator = holder.parent if holder is not None else None
    if declarator is None or declarator.type != "init_declarator":
        return None
    return _declarator_name(declarator.child_by_field_name("declarator"))[0]


def _struct_fields(program: Program, function: str, variable: str | None) -> dict[str, tuple[Node, str]]:
    """Field → (value, function) set on ``variable`` in ``function`` or at file scope (later writes win)."""
    found: dict[str, tuple[Node, str]] = {}
    if variable is None:
        return found
    for name, value, _unit, where in program.initializer_fields:
        if where in ("", function) and _field_owner(value) == variable:
            found[name] = (value, where)
    return found


def _configured_sides(program: Program, spec: Mapping[str, Any], start: Call) -> list[_Side] | None:
    """Zephyr: the buffers of the ``struct dma_block_config`` the matching ``dma_config`` call installs.

    The configuration matches when it names the same device and channel; one in the start's own function
    (the last before it) is preferred, else the only one in the artifact. None: no configuration found.
    """
    device = object_key(start.arg_node(spec["start"]["device"]))
    channel = _plain(start.arg_node(spec["start"]["channel"]))
    device = program.alias(start.function, device) or device if device else None
    matching = [
        c
        for c in program.calls_named({spec["call"]})
        if (key := object_key(c.arg_node(spec["device"]))) is not None
        and (program.alias(c.function, key) or key) == device
        and _plain(c.arg_node(spec["channel"])) == channel
    ]
    here = [
        c
        for c in matching
        if c.function == start.function and c.unit is start.unit and c.node.start_byte < start.node.start_byte
    ]
    chosen = here[-1] if here else matching[0] if len(matching) == 1 else None
    if chosen is None:
        return None
    config = _struct_fields(program, chosen.function, object_key(chosen.arg_node(spec["config"])))
    head = config.get(spec["head"])
    block = _struct_fields(program, head[1], object_key(head[0])) if head else {}
    direction = config.get(spec["direction"])
    roles = spec["directions"].get(_plain(direction[0]) if direction else "", ("source", "dest"))
    length = block.get(spec["block"]["length"])
    sides = []
    for role in roles:
        buffer = block.get(spec["block"][role])
        if buffer is not None:
            sides.append(_Side(role, buffer[0], buffer[1], length[0] if length else None))
    return sides


def _transfer_sides(program: Program, rules: Rules, start: Call) -> list[_Side] | None:
    """The buffers ``start`` transfers (None when the rules do not say how to find them)."""
    spec = rules.section("dma_cache")
    transfer = (spec.get("transfers") or {}).get(start.name)
    if transfer is not None:
        length = start.arg_node(transfer["length"])
        return [
            _Side(role, start.arg_node(transfer[role]), start.function, length)
            for role in ("source", "dest")
            if role in transfer
        ]
    configured = spec.get("configured")
    return _configured_sides(program, configured, start) if configured and start.name in configured["starts"] else None


def _positions(program: Program, callers: dict[str, list[Call]], call: Call, key: str) -> list[_Site]:
    """``call`` acting on ``key`` seen from its own function and from each caller, up to four levels.

    A parameter key becomes the argument the caller passes; the path keeps the order inside helpers.
    """
    own = _site(program, call, key, call)
    found = [own]
    frontier = [own]
    for _level in range(_MAX_HELPER_DEPTH):
        outer: list[_Site] = []
        for site in frontier:
            function = program.functions.get(site.call.function)
            for caller in callers.get(site.call.function, ()) if function is not None else ():
                name = site.key
                if site.parameter and function is not None and name is not None:
                    index = function.parameters.index(name)
                    name = object_key(caller.arg_node(index)) if index < len(caller.args) else None
                if name is not None:
                    lifted = _site(program, caller, name, site.origin)
                    outer.append(replace(lifted, path=(caller.node.start_byte, *site.path)))
        found += outer
        frontier = outer
    return found


def _is_buffer(program: Program, function: str, key: str | None) -> bool:
    """``key`` owns memory a DMA can move: an array, or a scalar (not a pointer, nor a peripheral handle
    whose register field the DMA addresses, ``&huart3.Instance->TDR``)."""
    declared = program.declaration(function, key) if key else None
    if declared is None or declared.pointer:
        return False
    return bool(declared.dims) or " ".join(declared.type_text.split()) in _TYPE_BYTES


def _maintenance_sites(program: Program, callers: dict[str, list[Call]], calls: list[Call]) -> list[list[_Site]]:
    """Each cache call's sites; its buffer is ``_ANY`` for a whole-cache call or an address not tied to an object."""
    found = []
    for call in calls:
        key = object_key(call.arg_node(0)) if call.args else None
        key = program.alias(call.function, key) or key if key else None
        function = program.functions.get(call.function)
        parameter = function is not None and key in function.parameters
        if key is None or not (parameter or _is_buffer(program, call.function, key)):
            key = _ANY
        found.append(_positions(program, callers, call, key))
    return found


def _same_place(a: _Site, b: _Site) -> bool:
    return a.call.function == b.call.function and a.call.unit is b.call.unit


def _meets(buffer: list[_Site], maintenance: list[_Site]) -> tuple[_Site, _Site] | None:
    """The lowest pair (buffer site, maintenance site) in one function acting on the same buffer."""
    for b in buffer:
        for m in maintenance:
            if _same_place(b, m) and (m.key == _ANY or (m.key == b.key and not m.parameter)):
                return b, m
    return None


def _acts_on(buffer: list[_Site], maintenance: list[_Site]) -> bool:
    keys = {b.key for b in buffer}
    return any(m.key == _ANY or (m.key in keys and not m.parameter) for m in maintenance)


def _ancestors(node: Node) -> list[Node]:
    found = []
    parent = node.parent
    while parent is not None and parent.type != "function_definition":
        found.append(parent)
        parent = parent.parent
    return found


def _in_loop_with(first: Node, second: Node) -> bool:
    """Both nodes lie in one loop: the later one runs before the earlier one's next iteration."""
    return any(a.type in _LOOPS and a.start_byte <= second.start_byte < a.end_byte for a in _ancestors(first))


def _completion_problem(program: Program, rules: Rules, buffer: _Site, invalidate: _Site) -> str | None:
    """Why an invalidate after the start, in the same function, is not on the completion path (else None).

    Completion is a wait API (``dma_cache.completion_waits``), a call into an artifact helper, a loop, or
    a test enclosing the invalidate, all after the start; the buffer must not be touched before.
    """
    spec = rules.section("dma_cache")
    waits = set(spec.get("completion_waits", ()))
    begin, end = buffer.call.node.end_byte, invalidate.call.node.start_byte
    between = [
        c
        for c in program.calls
        if c.function == buffer.call.function and c.unit is buffer.call.unit and begin <= c.node.start_byte < end
    ]
    touched_by = {*rules.dma_flush.exact, *rules.dma_invalidate.exact, *rules.dma_start_tx.exact}
    touched_by |= {*rules.dma_start_rx.exact, *rules.dma_start_both.exact}
    function = program.functions.get(buffer.call.function)
    for use in program.lvalue_uses(function) if function is not None and buffer.key != _ANY else ():
        if use.type == "identifier" and use.text == (buffer.key or "").encode() and begin <= use.start_byte < end:
            around = _ancestors(use)
            inside = any(a.type == "sizeof_expression" for a in around) or any(
                a.type == "call_expression"
                and (f := a.child_by_field_name("function")) is not None
                and (f.text or b"").decode() in touched_by
                for a in around
            )
            if not inside:
                return f"{buffer.key} is used at line {use.start_point[0] + 1} before it is invalidated"
    waited = any(c.name in waits or c.name in program.functions for c in between)
    enclosing = any(
        a.type in _LOOPS | {"if_statement"} and a.start_byte >= begin and not _in_condition(a, invalidate.call.node)
        for a in _ancestors(invalidate.call.node)
    )
    if waited or enclosing or _loop_between(function, begin, end):
        return None
    return "it is invalidated before anything waits for the transfer to complete"


def _in_condition(statement: Node, node: Node) -> bool:
    """``node`` is part of the statement's own test (``if (invalidate(…) < 0)`` tests no completion flag)."""
    condition = statement.child_by_field_name("condition")
    return condition is not None and condition.start_byte <= node.start_byte < condition.end_byte


def _loop_between(function: FunctionDef | None, begin: int, end: int) -> bool:
    stack = [function.node] if function is not None else []
    while stack:
        node = stack.pop()
        if node.type in _LOOPS and begin <= node.start_byte and node.end_byte <= end:
            return True
        if node.end_byte > begin and node.start_byte < end:
            stack.extend(node.named_children)
    return False


def _covers(program: Program, maintenance: _Site, side: _Side, names: set[str]) -> str | None:
    """Why the maintenance range is shorter than the transfer (None: it covers it, or sizes don't compare)."""
    if maintenance.key == _ANY:
        return None
    size = maintenance.origin.arg_node(1)
    if size is None or side.length is None:
        return None
    size_text, length_text = _plain(size), _plain(side.length)
    if size_text == length_text or any(re.fullmatch(rf"sizeof\(?{re.escape(n)}\)?", size_text) for n in names):
        return None
    covered = _evaluate(program, maintenance.origin.function, (size.text or b"").decode())
    needed = _evaluate(program, side.function, (side.length.text or b"").decode())
    if covered is None or needed is None or covered >= needed:
        return None
    return (
        f"{maintenance.origin.name} (line {maintenance.origin.line}) covers {covered} bytes while the transfer "
        f"({length_text}) moves at least {needed}"
    )


def _exempt(program: Program, rules: Rules, function: str, key: str, uncached: frozenset[str]) -> bool:
    """The buffer's own declaration puts it in memory the D-cache does not hold (marker or section)."""
    declared = program.declaration(function, key)
    if declared is None:
        return False
    text = declared.source()
    if any(marker in text for marker in rules.section("dma_cache").get("noncacheable_markers", ())):
        return True
    sections = {part.upper() for quoted in re.findall(r'"([^"\n]*)"', text) for part in re.split(r"[^\w]+", quoted)}
    return bool(sections & uncached)


def check_dma_cache(
    program: Program, rules: Rules, cache_present: bool, uncached: frozenset[str] = frozenset()
) -> list[Evidence]:
    """On a core with a D-cache: each DMA source cleaned before its start, each destination invalidated on
    the completion path, each with a range covering the transfer (see the section comment above).

    ``uncached``: upper-case names of memory regions the target does not cache (a buffer placed in one by
    its section needs no maintenance).
    """
    spec = rules.section("dma_cache")
    everywhere = " ".join(unit.text for unit in program.units)
    if not cache_present or any(marker in everywhere for marker in spec.get("noncacheable_config", ())):
        return []
    callers = _callers(program)
    flushes = _maintenance_sites(program, callers, [c for c in program.calls if c.name in rules.dma_flush])
    invalidates = _maintenance_sites(program, callers, [c for c in program.calls if c.name in rules.dma_invalidate])
    anywhere_exempt = any(marker in everywhere for marker in spec.get("noncacheable_markers", ()))
    found: list[Evidence] = []
    for start in program.calls:
        roles = set()
        if start.name in rules.dma_start_tx or start.name in rules.dma_start_both:
            roles.add("source")
        if start.name in rules.dma_start_rx or start.name in rules.dma_start_both:
            roles.add("dest")
        if not roles:
            continue
        sides = [s for s in _transfer_sides(program, rules, start) or () if s.role in roles]
        named: set[str] = set()
        for side in sides:
            key = object_key(side.node)
            key = program.alias(side.function, key) or key if key else None
            own = program.functions.get(side.function)
            if key is None or (side.function != start.function and own is not None and key in own.parameters):
                continue
            sites = [
                s
                for s in _positions(program, callers, start, key)
                if s.key and not s.parameter and _is_buffer(program, s.call.function, s.key)
            ]
            if not sites:
                continue
            named.add(side.role)
            if _exempt(program, rules, sites[0].call.function, sites[0].key or "", uncached):
                continue
            judge = _judge_source if side.role == "source" else _judge_dest
            problem = judge(program, rules, start, side, sites, flushes if side.role == "source" else invalidates)
            if problem is not None:
                found.append(problem)
        if not anywhere_exempt:
            found += _presence(start, roles - named, flushes, invalidates, rules)
    return found


def _judge_source(
    program: Program, rules: Rules, start: Call, side: _Side, sites: list[_Site], flushes: list[list[_Site]]
) -> Evidence | None:
    buffer = sites[0].key or ""
    where = f"{start.name} (line {start.line} in {start.function}())"
    before: list[_Site] = []
    late: list[_Site] = []
    for maintenance in flushes:
        pair = _meets(sites, maintenance)
        if pair is not None:
            (before if pair[1].path < pair[0].path else late).append(pair[1])
    if not before:
        if late:
            return finding(
                "E_CACHE_ORDER",
                f"{buffer} is cleaned by {late[0].origin.name} (line {late[0].origin.line}) only after {where} "
                "starts the DMA that reads it: the DMA may read stale memory",
                start.location,
                [buffer, start.name, late[0].origin.name],
                f"clean {buffer} before {start.name}",
            )
        return finding(
            "E_CACHE_FLUSH_MISSING",
            f"{buffer} is read by the DMA that {where} starts, but its D-cache range is not cleaned before the "
            f"start ({' / '.join(sorted(rules.dma_flush.exact))})",
            start.location,
            [buffer, start.name],
            f"clean {buffer} (its whole size) before {start.name}, or place it in non-cacheable memory",
        )
    shorts = [_covers(program, m, side, {buffer, object_key(side.node) or ""}) for m in before]
    if all(shorts):
        return _range_evidence(buffer, start, where, str(shorts[0]), "clean")
    return None


def _judge_dest(
    program: Program, rules: Rules, start: Call, side: _Side, sites: list[_Site], invalidates: list[list[_Site]]
) -> Evidence | None:
    buffer = sites[0].key or ""
    where = f"{start.name} (line {start.line} in {start.function}())"
    after: list[_Site] = []
    early: list[tuple[_Site, str]] = []
    only_before: _Site | None = None
    for maintenance in invalidates:
        pair = _meets(sites, maintenance)
        if pair is None:
            if _acts_on(sites, maintenance):
                after.append(maintenance[0])  # elsewhere: a completion callback or a later step
            continue
        b, m = pair
        if m.path < b.path and not _in_loop_with(b.call.node, m.call.node):
            only_before = only_before or m
            continue
        problem = None if m.path < b.path else _completion_problem(program, rules, b, m)
        if problem is None:
            after.append(m)
        else:
            early.append((m, problem))
    if not after:
        if early:
            m, problem = early[0]
            return finding(
                "E_CACHE_ORDER",
                f"{buffer} is written by the DMA that {where} starts, but at {m.origin.name} (line {m.origin.line}) "
                f"{problem}",
                start.location,
                [buffer, start.name, m.origin.name],
                f"invalidate {buffer} after the transfer completes (after its wait, flag or callback), before use",
            )
        when = f" (only before it, line {only_before.origin.line})" if only_before is not None else ""
        return finding(
            "E_CACHE_INVALIDATE_MISSING",
            f"{buffer} is written by the DMA that {where} starts, but its D-cache range is never invalidated "
            f"after completion{when} ({' / '.join(sorted(rules.dma_invalidate.exact))})",
            start.location,
            [buffer, start.name],
            f"invalidate {buffer} after the transfer completes, before reading it",
        )
    shorts = [_covers(program, m, side, {buffer, object_key(side.node) or ""}) for m in after]
    if all(shorts):
        return _range_evidence(buffer, start, where, str(shorts[0]), "invalidate")
    return None


def _range_evidence(buffer: str, start: Call, where: str, short: str, verb: str) -> Evidence:
    return finding(
        "E_CACHE_RANGE",
        f"{buffer} is transferred by the DMA that {where} starts, but {short}",
        start.location,
        [buffer, start.name],
        f"{verb} the whole transfer: sizeof({buffer}) or the transfer's length",
    )


def _presence(
    start: Call, roles: set[str], flushes: list[list[_Site]], invalidates: list[list[_Site]], rules: Rules
) -> list[Evidence]:
    """Buffers the check cannot name: some clean before the start in its function, some invalidate after."""
    found: list[Evidence] = []
    here = [s[0] for s in flushes if s[0].call.function == start.function and s[0].call.unit is start.unit]
    if "source" in roles and not any(s.call.node.start_byte < start.node.start_byte for s in here):
        found.append(
            finding(
                "E_CACHE_ORDER" if here else "E_CACHE_FLUSH_MISSING",
                f"{start.name} starts a DMA that reads memory but the D-cache is not cleaned "
                f"({' / '.join(sorted(rules.dma_flush.exact))}) before it in {start.function}()",
                start.location,
                [start.name],
                "clean the buffer range before the start, or place the buffer in non-cacheable memory",
            )
        )
    after = [
        s[0]
        for s in invalidates
        if not (s[0].call.function == start.function and s[0].call.unit is start.unit)
        or s[0].call.node.start_byte > start.node.start_byte
    ]
    if "dest" in roles and not after:
        found.append(
            finding(
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


# --------------------------------------------------------------------------------------------------
# Check 5: state shared between interrupt context and threads.
# --------------------------------------------------------------------------------------------------


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
        for node in program.lvalue_uses(function):
            if node.type == "identifier" and node.text:
                ident = node.text.decode()
                if ident in program.globals and ident not in local:
                    readers.setdefault(ident, name)
    reported: set[str] = set()
    for name in sorted(isr):
        function = program.functions[name]
        local = program.locals_of(function)
        for node in program.writes.get(name, ()):
            if node.type == "assignment_expression":
                target = _written_base(node.child_by_field_name("left"))
            else:
                target = _written_base(node.child_by_field_name("argument"))
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
                finding(
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
    """The first expression spelling ``variable`` (whitespace aside) that starts at or after ``after``."""
    plain = variable.encode()
    for node in program.lvalue_uses(function):
        if node.start_byte < after or node.end_byte - node.start_byte < len(plain):
            continue
        if node.text == plain or (node.type != "identifier" and re.sub(rb"\s+", b"", node.text or b"") == plain):
            return node
    return None


def _result_checked(call: Call, program: Program) -> tuple[bool, str]:
    if call.expansion is not None and not call.whole:  # judged inside the macro's own body
        inner = call.expansion.parent
        while inner is not None and inner.type in ("parenthesized_expression", "cast_expression"):
            inner = inner.parent
        discarded = inner is not None and inner.type == "expression_statement"
        return (False, f"discarded inside macro {call.macro}") if discarded else (True, "")
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
                finding(
                    "E_UNCHECKED_RETURN",
                    f"the result of {call.label} ({reason}) is {how}",
                    call.location,
                    [call.name],
                    f"test the result of {call.name} and handle the failure",
                )
            )
    return found
