"""Preprocessing-lite: make a file tree-sitter-parseable without moving any line.

``#define``
lines are collected and blanked; GNU ``__attribute__((…))`` and the framework's attribute macros are
blanked (their arguments — ``section(".x")``, ``aligned(32)`` — are not calls); an asm register label
(``register uint32_t r0 __asm__("r0") = …``) is blanked; conditional groups testing only ``__cplusplus``
are resolved with ``__cplusplus`` undefined (the ``extern "C" {`` guard of a header), everything else is
left to the parser.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Generic, TypeVar

import tree_sitter_c
from tree_sitter import Language, Node, Parser

from rac_fw.domains.firmware.verify.sdk import Rules

C_LANGUAGE = Language(tree_sitter_c.language())
"""The C grammar every parse and query uses."""


#: GNU C attribute keywords: blanked with their argument list in every framework.
_GNU_ATTRIBUTES = ("__attribute__", "__attribute")


_THREAD = threading.local()


def c_parser() -> Parser:
    """This thread's parser: a tree-sitter ``Parser`` must not be shared between threads (MCP sessions)."""
    parser: Parser | None = getattr(_THREAD, "parser", None)
    if parser is None:
        parser = _THREAD.parser = Parser(C_LANGUAGE)
    return parser


def node_text(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")




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


def matching_paren(text: str, open_at: int) -> int | None:
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
        close = matching_paren(text, match.end() - 1)
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


def calling_macros(macros: dict[str, Macro]) -> dict[str, Macro]:
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


class Memo(Generic[_Value]):
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


_DEFINED: Memo[_Defined] = Memo(256)


def defined_macros(text: str, rules: Rules) -> _Defined:
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
    stage = defined_macros(text, rules)
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
