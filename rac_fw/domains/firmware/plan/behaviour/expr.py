"""The expression language: a small, typed, C-free grammar the tool parses itself.

    level > 1500mV and not alarm        count % 10 == 0        clamp(err * 3 / 2, -100, 100)
    crc32(frame) == 0xcbf43926          mean(samples) - 20C    (ticks << 2) | 1

An expression is text in the plan; it is parsed here into a syntax tree (:class:`Node`), never pasted
into C. Names are variables, loop indices, ``<op>.<output>`` values of operations, and state names;
literals may carry a unit (``500ms``, ``1.5V``, ``20C``). Precedence, lowest first: ``or``, ``and``,
``not``, comparisons (non-associative), ``|``, ``^``, ``&``, shifts, ``+ -``, ``* / %``, unary ``- ~``,
indexing ``buf[i]``. Every error carries the column it was found at.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rac_fw.domains.firmware.plan.behaviour.units import UNITS

#: Longest expression text accepted (a plan states intent, not programs).
MAX_CHARS = 240
#: Deepest nesting accepted (parentheses, calls, operators), so no input can exhaust the parser's stack.
MAX_DEPTH = 24


class ExprError(ValueError):
    """An expression that does not parse or type-check; ``column`` is 1-based into the text; ``code`` is the
    evidence code (E_BEHAVIOUR_EXPR: syntax and names, E_BEHAVIOUR_TYPE: kinds, E_BEHAVIOUR_UNIT: units)."""

    def __init__(self, message: str, column: int = 0, suggestions: tuple[str, ...] = (),
                 code: str = "E_BEHAVIOUR_EXPR"):  # fmt: skip
        super().__init__(message)
        self.column = column
        self.suggestions = suggestions
        self.code = code


@dataclass(frozen=True)
class Node:
    """A syntax-tree node; ``column`` is where it starts in the text (1-based)."""

    column: int


@dataclass(frozen=True)
class Num(Node):
    value: int | float
    unit: str | None = None


@dataclass(frozen=True)
class Bool(Node):
    value: bool


@dataclass(frozen=True)
class Name(Node):
    """``count``, ``adc.mv`` (an operation's output), ``connected`` (a state)."""

    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class Unary(Node):
    op: str
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Call(Node):
    name: str
    args: tuple[Node, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Index(Node):
    base: Node
    index: Node


_TOKEN = re.compile(
    r"""(?P<space>\s+)
      |(?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|\d[\d_]*(?:\.\d+)?)(?P<unit>[a-zA-Z]+)?
      |(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)
      |(?P<op><<|>>|<=|>=|==|!=|[-+*/%&|^~<>()\[\],])""",
    re.X,
)
_KEYWORDS = {"and", "or", "not", "true", "false"}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    column: int
    unit: str | None = None


def tokenize(text: str) -> list[_Tok]:
    """The tokens of ``text`` (numbers with their unit suffix, names, operators)."""
    if len(text) > MAX_CHARS:
        raise ExprError(f"expression longer than {MAX_CHARS} characters", 1)
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ExprError(f"unexpected character {text[pos]!r}", pos + 1)
        column = pos + 1
        pos = m.end()
        if m.group("space"):
            continue
        if m.group("num") is not None:
            suffix = m.group("unit")
            if suffix is not None and suffix not in UNITS:
                raise ExprError(f"unknown unit {suffix!r} after {m.group('num')}; units: {', '.join(UNITS)}",
                                column)  # fmt: skip
            tokens.append(_Tok("num", m.group("num"), column, suffix))
        elif m.group("name") is not None:
            word = m.group("name")
            tokens.append(_Tok("kw" if word in _KEYWORDS else "name", word, column))
        else:
            tokens.append(_Tok("op", m.group("op"), column))
    tokens.append(_Tok("end", "", len(text) + 1))
    return tokens


def _number(token: _Tok) -> int | float:
    raw = token.text.replace("_", "")
    if raw[:2].lower() == "0x":
        return int(raw, 16)
    if raw[:2].lower() == "0b":
        return int(raw, 2)
    return float(raw) if "." in raw else int(raw)


_BINARY = (
    ("or",), ("and",), (), ("==", "!=", "<", "<=", ">", ">="), ("|",), ("^",), ("&",), ("<<", ">>"),
    ("+", "-"), ("*", "/", "%"),
)  # fmt: skip
_NOT_LEVEL = 2


class _Parser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.pos = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.tokens[self.pos]

    def take(self) -> _Tok:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, text: str) -> _Tok:
        if self.tok.text != text:
            found = self.tok.text or "the end"
            raise ExprError(f"expected {text!r} but found {found!r}", self.tok.column)
        return self.take()

    def parse(self) -> Node:
        node = self.level(0)
        if self.tok.kind != "end":
            raise ExprError(f"unexpected {self.tok.text!r}", self.tok.column)
        return node

    @contextmanager
    def nested(self, column: int) -> Iterator[None]:
        """One level of real nesting (parentheses, a call, an index, a unary operator), bounded so no input
        can exhaust the parser's stack; precedence levels are not nesting and do not count."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExprError(f"expression nested deeper than {MAX_DEPTH}", column)
        try:
            yield
        finally:
            self.depth -= 1

    def level(self, index: int) -> Node:
        if index == len(_BINARY):
            return self.unary()
        if index == _NOT_LEVEL:
            if self.tok.text == "not":
                start = self.take()
                with self.nested(start.column):
                    return Unary(start.column, "not", self.level(index))
            return self.level(index + 1)
        left = self.level(index + 1)
        ops = _BINARY[index]
        comparison = "==" in ops
        while self.tok.text in ops and self.tok.kind in ("op", "kw"):
            token = self.take()
            right = self.level(index + 1)
            left = Binary(token.column, token.text, left, right)
            if comparison and self.tok.text in ops:
                raise ExprError("comparisons do not chain: write (a < b) and (b < c)", self.tok.column)
        return left

    def unary(self) -> Node:
        if self.tok.text in ("-", "~"):
            token = self.take()
            with self.nested(token.column):
                operand = self.unary()
            if token.text == "-" and isinstance(operand, Num):
                return Num(token.column, -operand.value, operand.unit)
            return Unary(token.column, token.text, operand)
        node = self.primary()
        while self.tok.text == "[":
            start = self.take()
            with self.nested(start.column):
                index = self.level(0)
            self.expect("]")
            node = Index(start.column, node, index)
        return node

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "num":
            return Num(token.column, _number(token), token.unit)
        if token.kind == "kw" and token.text in ("true", "false"):
            return Bool(token.column, token.text == "true")
        if token.kind == "name":
            if self.tok.text == "(":
                if "." in token.text:
                    raise ExprError(f"{token.text!r} is not a function", token.column)
                self.take()
                args: list[Node] = []
                with self.nested(token.column):
                    if self.tok.text != ")":
                        args.append(self.level(0))
                        while self.tok.text == ",":
                            self.take()
                            args.append(self.level(0))
                self.expect(")")
                return Call(token.column, token.text, tuple(args))
            return Name(token.column, tuple(token.text.split(".")))
        if token.text == "(":
            with self.nested(token.column):
                inner = self.level(0)
            self.expect(")")
            return inner
        found = token.text or "the end"
        raise ExprError(f"expected a value but found {found!r}", token.column)


def parse(text: str) -> Node:
    """The syntax tree of ``text`` (:class:`ExprError` with a column on any problem)."""
    if not text.strip():
        raise ExprError("empty expression", 1)
    return _Parser(text).parse()


def names(node: Node) -> list[Name]:
    """Every name the expression mentions, in order."""
    if isinstance(node, Name):
        return [node]
    if isinstance(node, Unary):
        return names(node.operand)
    if isinstance(node, Binary):
        return names(node.left) + names(node.right)
    if isinstance(node, Call):
        return [n for a in node.args for n in names(a)]
    if isinstance(node, Index):
        return names(node.base) + names(node.index)
    return []
