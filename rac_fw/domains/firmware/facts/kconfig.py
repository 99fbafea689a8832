"""Kconfig symbols as facts: which symbols a framework release has, their types, ranges and dependencies.

The verifier has no Zephyr or ESP-IDF tree to load, yet Zephyr aborts a build on a ``prj.conf`` line that
names an unknown symbol, assigns a value outside the symbol's range, or sets a symbol whose dependencies
are not met (the Kconfig warning is an error there), and ESP-IDF's ``kconfgen`` renames or drops the old
names of its options. So the symbols the lowerings write, and those their dependencies name, are recorded
here as compact data read from the real trees (``kconfig_<framework>.yaml``, each row citing its Kconfig
file): type, ranges (Kconfig's ``range MIN MAX if COND``, first matching wins), ``depends on``, ``select``
and ``default y if``; releases a symbol came with or left (``since``/``until``); ESP-IDF's renames
(``sdkconfig.rename``). :func:`enabled` closes a configuration the way Kconfig does for these facts (the
board's defconfig, selects, conditional defaults), and :func:`holds` evaluates a dependency expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import yaml
from pydantic import ConfigDict, TypeAdapter, with_config

from rac_fw.domains.firmware.facts.sdk import release, version_key

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

_STRICT = ConfigDict(extra="forbid")
_HERE = Path(__file__).resolve().parent


@with_config(_STRICT)
@dataclass(frozen=True)
class Range:
    """``range MIN MAX [if COND]``."""

    min: int
    max: int
    when: str | None = None
    """The ``if`` condition (a dependency expression), None: unconditional."""


@with_config(_STRICT)
@dataclass(frozen=True)
class Symbol:
    """One Kconfig symbol as its ``config`` entry declares it."""

    type: Literal["bool", "tristate", "int", "hex", "string"]
    source: str
    """The Kconfig file that declares it (``subsys/bluetooth/host/Kconfig.l2cap``)."""
    ranges: tuple[Range, ...] = ()
    depends: str | None = None
    """Its ``depends on`` expression (``&&``, ``||``, ``!``, parentheses), the enclosing ``if``/``menu`` included."""
    selects: tuple[str, ...] = ()
    default_if: str | None = None
    """``default y if COND`` (``y`` for a plain ``default y``) of a bool the facts need to close a configuration."""
    since: str | None = None
    """The first release that has it (None: every release described)."""
    until: str | None = None
    """The last release that has it (None: still there)."""
    choice: str | None = None
    """The choice it is a member of (members exclude each other)."""


@with_config(_STRICT)
@dataclass(frozen=True)
class KconfigFacts:
    """One framework's Kconfig symbols (names without ``CONFIG_``)."""

    framework: str
    source: str
    symbols: dict[str, Symbol]
    renamed: dict[str, str] = field(default_factory=dict)
    """Old name → new name (ESP-IDF ``sdkconfig.rename`` files): the old name is refused."""
    renamed_in: dict[str, str] = field(default_factory=dict)
    """Old name → the release that renamed it (absent: before every release described)."""

    def symbol(self, name: str, version: str | None) -> Symbol | None:
        """The symbol ``name`` on release ``version`` (None when the release has no such symbol)."""
        found = self.symbols.get(name)
        if found is None or version is None:
            return found
        if found.since is not None and version_key(version) < version_key(found.since):
            return None
        if found.until is not None and version_key(version) > version_key(found.until):
            return None
        return found

    def rename(self, name: str, version: str | None) -> str | None:
        """The name ``name`` has on release ``version`` when it was renamed (None: not renamed)."""
        new = self.renamed.get(name)
        since = self.renamed_in.get(name)
        if new is None or (since is not None and version is not None and version_key(version) < version_key(since)):
            return None
        return new


@cache
def kconfig_facts(framework: str) -> KconfigFacts | None:
    """The Kconfig facts of ``framework`` (None when none are recorded). Zephyr's include the sensor drivers'
    symbols the binding facts name (``facts/bindings.yaml``: one place records a driver's Kconfig)."""
    path = _HERE / f"kconfig_{framework}.yaml"
    if not path.is_file():
        return None
    raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if framework == "zephyr":
        from rac_fw.domains.firmware.facts.devicetree import bindings

        for compatible, found in bindings().items():
            for name in (*found.kconfig, *found.trigger_kconfig):
                raw["symbols"].setdefault(name.removeprefix("CONFIG_"), {
                    "type": "bool", "source": f"facts/bindings.yaml ({compatible})", "depends": "SENSOR"})
    return TypeAdapter(KconfigFacts).validate_python({"framework": framework, **raw})


_TOKEN = re.compile(r"\s*(&&|\|\||!|\(|\)|[A-Za-z0-9_]+)")


def holds(expression: str | None, on: set[str] | frozenset[str]) -> bool:
    """Whether a Kconfig dependency expression holds when exactly the symbols ``on`` are ``y``."""
    if expression is None or expression.strip() in ("", "y"):
        return True
    tokens = _TOKEN.findall(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def disjunction() -> bool:
        value = conjunction()
        while peek() == "||":
            take()
            value = conjunction() or value
        return value

    def conjunction() -> bool:
        value = unary()
        while peek() == "&&":
            take()
            value = unary() and value
        return value

    def unary() -> bool:
        token = take()
        if token == "!":
            return not unary()
        if token == "(":
            value = disjunction()
            take()
            return value
        return token in on or token == "y"

    return disjunction()


def names(expression: str | None) -> list[str]:
    """The symbols a dependency expression names."""
    return [t for t in _TOKEN.findall(expression or "") if t not in ("&&", "||", "!", "(", ")", "y", "n")]


def enabled(facts: KconfigFacts, version: str | None, on: set[str], off: set[str] | None = None) -> frozenset[str]:
    """The ``y`` symbols of a configuration that sets ``on`` (plus the board's defconfig) and switches ``off``
    off, closed under the facts' ``select``s and ``default y if`` entries, as Kconfig would evaluate them."""
    closed = set(on)
    off = off or set()
    while True:
        before = len(closed)
        for name, symbol in facts.symbols.items():
            if facts.symbol(name, version) is None:
                continue
            if name in closed:
                closed.update(symbol.selects)
            elif (name not in off and symbol.default_if is not None and holds(symbol.depends, closed)
                  and holds(symbol.default_if, closed)):
                closed.add(name)
        if len(closed) == before:
            return frozenset(closed)


def range_of(symbol: Symbol, on: frozenset[str]) -> Range | None:
    """The range that applies (Kconfig: the first whose condition holds)."""
    return next((r for r in symbol.ranges if holds(r.when, on)), None)


def minimum(framework: str, version: str | None, name: str, on: frozenset[str]) -> int:
    """The smallest value Kconfig accepts for int symbol ``name`` in a configuration setting ``on`` (closed
    as :func:`enabled` does); 0 when the facts give it no range."""
    facts = kconfig_facts(framework)
    symbol = facts.symbol(name, version) if facts is not None else None
    if facts is None or symbol is None:
        return 0
    limits = range_of(symbol, enabled(facts, version, set(on)))
    return limits.min if limits is not None else 0


def release_has(target: Target | None, framework: str, name: str) -> bool:
    """Whether the release ``framework``'s output is written for on ``target`` has Kconfig symbol ``name``
    (a framework without Kconfig facts: yes)."""
    facts = kconfig_facts(framework)
    written_for = release(target, framework)
    return facts is None or facts.symbol(name, written_for.version if written_for else None) is not None
