"""A reader for KiCad's S-expression files (``.kicad_pcb``, ``.kicad_mod``; KiCad 6, 7 and 8).

KiCad's format is plain S-expressions: ``(head child child ...)`` where a child is a bare symbol, a
double-quoted string (``\\"`` and ``\\\\`` escaped) or another list. The versions differ in *what*
they write (KiCad 8 quotes every string, writes ``(property "Reference" …)`` instead of
``(fp_text reference …)``, ``yes``/``no`` flags instead of bare symbols), not in the syntax, so one
reader serves all three and the importers ask for what they need through :class:`Node`. Nothing here
evaluates anything; a malformed file is a :class:`SexprError` with the byte offset.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_TOKEN = re.compile(r'\s*(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|([^\s()"]+))', re.S)
_UNESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


class SexprError(ValueError):
    """The text is not a well-formed S-expression; ``offset`` is where the reader stopped."""

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} at byte {offset}")
        self.offset = offset


@dataclass
class Node:
    """One list ``(name arg arg …)``: ``args`` are its atoms (strings, unquoted) and sub-lists in order."""

    name: str
    args: list[str | Node] = field(default_factory=list)

    # --- navigation --------------------------------------------------------------------------------
    def all(self, name: str) -> Iterator[Node]:
        """Every direct child list called ``name``."""
        return (a for a in self.args if isinstance(a, Node) and a.name == name)

    def first(self, name: str) -> Node | None:
        return next(self.all(name), None)

    def atoms(self) -> list[str]:
        return [a for a in self.args if isinstance(a, str)]

    def atom(self, i: int = 0, default: str = "") -> str:
        atoms = self.atoms()
        return atoms[i] if i < len(atoms) else default

    def value(self, name: str, default: str = "") -> str:
        """The first atom of child ``name`` (``(width 0.2)`` → ``"0.2"``)."""
        child = self.first(name)
        return child.atom(0, default) if child is not None else default

    def number(self, name: str, default: float = 0.0) -> float:
        child = self.first(name)
        if child is None or not child.atoms():
            return default
        return float(child.atom(0))

    def xy(self, name: str) -> tuple[float, float] | None:
        """``(name x y …)`` → (x, y)."""
        child = self.first(name)
        if child is None:
            return None
        a = child.atoms()
        return float(a[0]), float(a[1])

    def flag(self, name: str) -> bool:
        """A KiCad flag: a bare ``name`` atom (KiCad 6/7) or ``(name yes)`` (KiCad 8)."""
        if name in self.atoms():
            return True
        child = self.first(name)
        return child is not None and child.atom(0, "yes") == "yes"

    def walk(self) -> Iterator[Node]:
        """This node and every list below it, depth first."""
        stack: list[Node] = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed([a for a in n.args if isinstance(a, Node)]))


def _unescape(s: str) -> str:
    return _UNESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), s) if "\\" in s else s


def parse(text: str) -> Node:
    """The first top-level list of ``text``."""
    stack: list[Node] = []
    root: Node | None = None
    pos = 0
    expect_name = False
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            raise SexprError("unexpected character", pos)
        pos = m.end()
        opened, closed, quoted, bare = m.groups()
        if opened:
            expect_name = True
            continue
        if closed:
            if expect_name:
                raise SexprError("empty list", m.start())
            if not stack:
                raise SexprError("unbalanced ')'", m.start())
            node = stack.pop()
            if not stack:
                root = node
                rest = text[pos:].strip()
                if rest:
                    raise SexprError("text after the top-level list", pos + text[pos:].index(rest[0]))
                break
            continue
        atom = _unescape(quoted) if quoted is not None else bare
        if expect_name:
            node = Node(atom)
            if stack:
                stack[-1].args.append(node)
            stack.append(node)
            expect_name = False
        elif stack:
            stack[-1].args.append(atom)
        else:
            raise SexprError("atom outside a list", m.start())
    if stack or root is None:
        raise SexprError("unterminated list" if stack else "no list found", pos)
    return root


def quote(text: str) -> str:
    """``text`` as a KiCad string literal (the escaping KiCad's own writer uses)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
