"""JSON Schema helpers shared by the CLI, the MCP server and the domains' catalogs.

Why they exist: a tool definition is paid for in tokens by every agent on every call, so the schemas
an MCP client receives are kept to what an agent needs — references inlined, pydantic's generated
titles dropped, and a large action language cut into an *envelope* (the payload's shape with each
variant of a discriminated union reduced to its tag) plus one schema per variant served on demand.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: Longest purpose line in an index (the model's docstring says the rest).
PURPOSE_CHARS = 44


def inline_refs(schema: dict[str, Any], stub: Callable[[str], dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """Inline ``$defs`` references so a model's schema stands alone (inside a tool's parameters too).

    ``stub(name)`` may answer a definition with a short stand-in instead (a recursive language's nested
    steps point to where their schema is served); a definition that refers to itself is cut there."""
    defs = schema.get("$defs", {})

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                short = stub(name) if stub is not None else None
                if short is not None:
                    return short
                if name in seen:
                    return {"description": f"(recursive: {name})"}
                return walk(defs[name], (*seen, name))
            return {k: walk(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v, seen) for v in node]
        return node

    result = walk(schema, ())
    return result if isinstance(result, dict) else {}


def without_titles(schema: Any) -> Any:
    """``schema`` without the ``title`` keywords pydantic derives from class and field names: they repeat
    the property name, and an agent reads the name. A *property* called ``title`` is kept."""
    if isinstance(schema, list):
        return [without_titles(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            out[key] = {name: without_titles(sub) for name, sub in value.items()}
        else:
            out[key] = without_titles(value)
    return out


def first_sentence(doc: str | None, fallback: str = "") -> str:
    """The first sentence of a docstring's first paragraph, on one line, without reST literals."""
    paragraph = " ".join((doc or fallback).strip().split("\n\n")[0].split())
    return re.split(r"(?<!e\.g)(?<!i\.e)\. (?=[A-Z])", paragraph)[0].rstrip(".").replace("``", "")


def purpose(sentence: str, chars: int = PURPOSE_CHARS) -> str:
    """``sentence`` cut at a word boundary to at most ``chars`` characters (an index line; no ellipsis:
    every index line is a cut, and the part schema has the whole docstring)."""
    if len(sentence) <= chars:
        return sentence
    return sentence[: chars + 1].rsplit(" ", 1)[0].rstrip(",;:( ")


def _is_union(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("discriminator"), dict) and "oneOf" in node


def union_parts(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every variant of every discriminated union in ``schema``: tag value → the variant's standalone
    schema (``{}`` when the schema has no such union)."""
    defs = schema.get("$defs", {})
    parts: dict[str, dict[str, Any]] = {}

    def walk(node: Any) -> None:
        if _is_union(node):
            for tag, ref in node["discriminator"].get("mapping", {}).items():
                member = defs.get(str(ref).removeprefix("#/$defs/"))
                if member is not None:
                    parts.setdefault(tag, inline_refs({**member, "$defs": defs}))
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk({k: v for k, v in schema.items() if k != "$defs"})
    walk(defs)
    return parts


def union_envelope(schema: dict[str, Any], how: str) -> dict[str, Any]:
    """``schema`` with each discriminated union reduced to ``{TAG: one of …}``: the variant's other fields
    are checked on submission and described by its part schema (``how`` says where to get it)."""

    def walk(node: Any) -> Any:
        if _is_union(node):
            tag = node["discriminator"]["propertyName"]
            return {"type": "object", "required": [tag], "description": how,
                    "properties": {tag: {"enum": list(node["discriminator"].get("mapping", {}))}}}
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return inline_refs(walk(schema))
