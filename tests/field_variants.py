"""Values a plan field may take instead of the one it has, drawn from its JSON Schema (for the field-effect test).

``variants(schema, value)`` yields ``(relative path, new value)`` pairs: another enum member, the flipped
boolean, an integer at a bound or one step away, a string the field's pattern accepts, a field left out set,
an optional field set to null, a nested object's fields one at a time, a list shortened or its first item
changed. Every value is valid for the field's own schema; whether the document it makes is valid for the whole
schema (its cross-field rules: "exactly one of period_ms, period_us") is the caller's question. The choice is
deterministic (``hypothesis.find`` with a derandomized search, no example database).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from rac_fw.contract import apply_patch

Path = list[str | int]
_SEARCH = settings(database=None, derandomize=True, max_examples=200, suppress_health_check=list(HealthCheck))


def resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$ref`` followed (one level at a time, as often as needed)."""
    while "$ref" in schema:
        schema = {**defs[schema["$ref"].rsplit("/", 1)[1]], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _options(schema: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternatives of a union (anyOf/oneOf), or the schema itself."""
    schema = resolve(schema, defs)
    found = None if "properties" in schema else schema.get("anyOf") or schema.get("oneOf")  # an object's are rules
    return [resolve(s, defs) for s in found] if found else [schema]


def _string(schema: dict[str, Any], avoid: Any) -> str | None:
    return _drawn(schema.get("pattern"), schema.get("minLength", 0), schema.get("maxLength", 64), avoid)


#: Strings tried first (cheap), before a search: plan names, pins, peripherals, paths, topics.
_TRIED = ("b", "x1", "alt_2", "led1", "sw1", "P0.02", "PA1", "GPIO2", "USART1", "SPI2", "I2C2", "TIM3", "ADC1_IN2",
          "/x", "/a/b", "a/b", "x.txt", "2", "A", "x")  # fmt: skip


@cache
def _drawn(pattern: str | None, low: int, high: int, avoid: Any) -> str | None:
    """A string of the pattern and length bounds other than ``avoid`` (searched once per question): the value
    with one more character, then :data:`_TRIED`, then a derandomized search."""
    mutations = (f"{avoid}2", f"{avoid}b", f"{avoid[:-1]}x") if isinstance(avoid, str) and avoid else ()
    for text in (*mutations, *_TRIED):
        if text != avoid and low <= len(text) <= high and (pattern is None or re.fullmatch(pattern, text)):
            return text
    if pattern is None:
        return None if avoid == "x" * max(low, 1) else "x" * max(low, 1)
    try:
        return str(
            find(
                st.from_regex(pattern, fullmatch=True),
                lambda s: s != avoid and low <= len(s) <= high and re.fullmatch(pattern, s) is not None,
                settings=_SEARCH,
            )
        )
    except NoSuchExample:
        return None


def sample(schema: dict[str, Any], defs: dict[str, Any], avoid: Any = None) -> Any:
    """One valid value of ``schema`` other than ``avoid`` (None when none is found)."""
    for option in _options(schema, defs):
        kind = option.get("type")
        if "const" in option:
            if option["const"] != avoid:
                return option["const"]
            continue
        if "enum" in option:
            return next((e for e in option["enum"] if e != avoid), None)
        if kind == "boolean":
            return not avoid if isinstance(avoid, bool) else True
        if kind in ("integer", "number"):
            return next(iter(_numbers(option, avoid)), None)
        if kind == "string":
            found = _string(option, avoid)
            if found is not None:
                return found
        if kind == "array":
            item = sample(option.get("items", {}), defs)
            if item is not None:
                return [item] * max(1, option.get("minItems", 1))
        if kind == "object":
            properties = option.get("properties", {})
            made = {name: sample(properties[name], defs) for name in option.get("required", [])}
            if all(v is not None for v in made.values()):
                return made
    return None


def _numbers(schema: dict[str, Any], current: Any) -> list[float | int]:
    low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1 if "exclusiveMinimum" in schema else None)
    high = schema.get("maximum", schema.get("exclusiveMaximum", 0) - 1 if "exclusiveMaximum" in schema else None)
    base = current if isinstance(current, int | float) and not isinstance(current, bool) else (low or 1)
    found: list[float | int] = []
    for value in (high, low, base * 2, base + 1, base - 1, base // 2 if isinstance(base, int) else base / 2):
        if value is None or value == current or value in found:
            continue
        if (low is None or value >= low) and (high is None or value <= high):
            found.append(int(value) if schema.get("type") == "integer" else value)
    return found


def variants(schema: dict[str, Any], value: Any, defs: dict[str, Any], depth: int = 0) -> Iterator[tuple[Path, Any]]:
    """Changes to ``value`` that ``schema`` allows: at this path (``[]``) or inside it (one field at a time)."""
    options = _options(schema, defs)
    nullable = any(o.get("type") == "null" for o in options)
    concrete = [o for o in options if o.get("type") != "null"]
    if value is None:
        for option in concrete:
            if option.get("type") == "object":  # an object the plan leaves out: each of its fields set in turn
                made = sample(option, defs)
                for path, new in variants(option, made, defs, depth + 1) if made is not None else ():
                    yield [], apply_patch(made, [{"op": "replace", "path": path, "value": new}]) if path else new
                continue
            yield from (([], made) for made in alternatives(option, None, defs))
        return
    if nullable:
        yield [], None
    for option in concrete:
        kind = option.get("type")
        if kind == "object" and isinstance(value, dict) and depth < 3:
            for name, sub in option.get("properties", {}).items():
                current = value.get(name, resolve(sub, defs).get("default"))  # an omitted field holds its default
                for path, new in variants(sub, current, defs, depth + 1):
                    yield [name, *path], new
            return
        if kind == "array" and isinstance(value, list):
            if len(value) > option.get("minItems", 0):
                yield [], value[:-1]
            if value:
                for path, new in variants(option.get("items", {}), value[0], defs, depth + 1):
                    yield [0, *path], new
                    break
            return
    yield from (([], other) for other in alternatives(schema, value, defs))


#: Most values tried per field: a change equivalent to the current value (an explicit choice the tool would
#: make anyway) is not a dead field, so a few are tried.
TRIED = 3


def alternatives(schema: dict[str, Any], value: Any, defs: dict[str, Any]) -> list[Any]:
    """Up to :data:`TRIED` valid values of ``schema`` other than ``value``."""
    found: list[Any] = []
    for option in _options(schema, defs):
        if option.get("type") == "null":
            continue
        if "enum" in option:
            found += [e for e in option["enum"] if e != value]
        elif "const" in option:
            found += [option["const"]] if option["const"] != value else []
        elif option.get("type") in ("integer", "number"):
            found += _numbers(option, value)
        elif option.get("type") == "boolean":
            found += [not value] if isinstance(value, bool) else [True, False]
        else:
            made = sample(option, defs, avoid=value)
            if made is not None and made != value:
                found.append(made)
    unique = [v for i, v in enumerate(found) if v not in found[:i]]
    return unique[:TRIED]
