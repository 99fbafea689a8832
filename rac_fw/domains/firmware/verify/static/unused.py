"""Rule ``no_unused_statics``: every file-scope ``static`` object and function of a source file is used in it.

A ``static`` object nothing in its file reads or writes is dead state the generator emitted by mistake
(``'temperature_tx' defined but not used`` from GCC's ``-Wunused-variable`` on generated HAL code): a
warning in a ``-Wall -Werror`` build, and usually a sign that an operation lost the code using it. Only
``.c`` files are judged (a ``static`` in a header is shared by its includers); an object marked
``__unused``/``__maybe_unused``/``__used`` (or GNU ``unused``/``used``) is exempt, and a name that
appears in one of the artifact's own macros counts as used (macro bodies are not parsed as C). A ``static
inline`` function is exempt as GCC exempts it from ``-Wunused-function``: a helper library offered to the
code after it (the behaviour runtime's formatters and CRCs), of which the compiler keeps what is called.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from tree_sitter import Node, Query, QueryCursor

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.static.model import Unit, declarator_name, finding
from rac_fw.domains.firmware.verify.static.preprocess import C_LANGUAGE
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context

_EXEMPT = re.compile(r"\b(__unused|__maybe_unused|__used)\b|__attribute__\s*\(\(\s*(?:__)?(unused|used)")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n\\]|\\.)*", re.M | re.S)
_CONTAINERS = frozenset({"translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"})


def _file_statics(unit: Unit) -> list[tuple[str, Node, Node]]:
    """(name, declarator identifier, declaration or definition) of each file-scope ``static`` object and
    function (``-Wunused-function`` warns of a static function nothing calls, as of an unused object)."""
    found: list[tuple[str, Node, Node]] = []
    stack = [unit.root]
    while stack:
        node = stack.pop()
        if node.type in _CONTAINERS:
            stack.extend(reversed(node.named_children))
            continue
        if node.type not in ("declaration", "function_definition"):
            continue
        storage = {(c.text or b"").decode() for c in node.children if c.type == "storage_class_specifier"}
        if "static" not in storage:
            continue
        if node.type == "function_definition":
            if "inline" in storage:
                continue
            ident = _identifier(node.child_by_field_name("declarator"))
            if ident is not None and ident.text:
                found.append((ident.text.decode(), ident, node))
            continue
        for declarator in node.children_by_field_name("declarator"):
            initialized = declarator.type == "init_declarator"
            target = declarator.child_by_field_name("declarator") if initialized else declarator
            name, is_function = declarator_name(target)
            ident = _identifier(target)
            if name and not is_function and ident is not None:
                found.append((name, ident, node))
    return found


def _identifier(node: Node | None) -> Node | None:
    while node is not None and node.type != "identifier":
        node = node.child_by_field_name("declarator")
    return node


def _kind(declaration: Node) -> str:
    return "function" if declaration.type == "function_definition" else "object"


_IDENTIFIERS = Query(C_LANGUAGE, "(identifier) @name")


_UNIT_FACTS: WeakKeyDictionary[Unit, tuple[list[tuple[str, Node, Node]], dict[bytes, int]]] = WeakKeyDictionary()


def _referenced(unit: Unit) -> dict[bytes, int]:
    """Identifier → how many times the unit names it (declarations included)."""
    counts: dict[bytes, int] = {}
    for node in QueryCursor(_IDENTIFIERS).captures(unit.root).get("name", []):
        if node.text:
            counts[node.text] = counts.get(node.text, 0) + 1
    return counts


def _unit_facts(unit: Unit) -> tuple[list[tuple[str, Node, Node]], dict[bytes, int]]:
    """(file-scope statics, identifier counts), memoized per unit (units are shared between verifications)."""
    facts = _UNIT_FACTS.get(unit)
    if facts is None:
        statics = _file_statics(unit)
        facts = _UNIT_FACTS[unit] = (statics, _referenced(unit) if statics else {})
    return facts


@register("no_unused_statics", "E_UNUSED_STATIC")
def check_unused_statics(ctx: Context) -> list[Evidence]:
    defines = (m.group() for text in ctx.files.values() for m in _DEFINE.finditer(text))
    macro_words = {word for define in defines for word in re.findall(r"\w+", define)}
    found: list[Evidence] = []
    for unit in ctx.program.units:
        if not unit.path.endswith(".c"):
            continue
        statics, counts = _unit_facts(unit)
        if not statics:
            continue
        lines = unit.text.split("\n")
        for name, ident, declaration in statics:
            # A definition's attributes come before its name; a declaration's anywhere in it.
            end = declaration.end_point[0] if declaration.type == "declaration" else ident.start_point[0]
            declared = "\n".join(lines[declaration.start_point[0] : end + 1])
            if counts.get(name.encode(), 0) > 1 or name in macro_words or _EXEMPT.search(declared):
                continue
            found.append(
                finding(
                    "E_UNUSED_STATIC",
                    f"static {_kind(declaration)} {name} is defined but nothing in {unit.path} uses it "
                    f"(GCC: '{name}' defined but not used)",
                    unit.location(ident),
                    [name],
                    f"remove {name}, or use it where the operation needs it",
                )
            )
    return found
