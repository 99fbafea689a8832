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


def _recursive(defs: dict[str, Any]) -> set[str]:
    """The definitions that can reach themselves through references (a recursive language's nodes)."""
    edges: dict[str, set[str]] = {}

    def refs(node: Any, into: set[str]) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                into.add(ref.removeprefix("#/$defs/"))
            for value in node.values():
                refs(value, into)
        elif isinstance(node, list):
            for value in node:
                refs(value, into)

    for name, body in defs.items():
        edges[name] = set()
        refs(body, edges[name])
    found = set()
    for start in defs:
        stack, seen = list(edges[start]), set()
        while stack:
            name = stack.pop()
            if name == start:
                found.add(start)
                break
            if name not in seen and name in edges:
                seen.add(name)
                stack.extend(edges[name])
    return found


def inline_refs(schema: dict[str, Any], stub: Callable[[str], dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """Inline ``$defs`` references so a model's schema stands alone (inside a tool's parameters too).

    ``stub(name)`` may answer a definition with a short stand-in instead (a recursive language's nested
    steps point to where their schema is served). Definitions that reach themselves stay references, kept
    in ``$defs`` (each inlined once there), so a recursive language costs its size once, not exponentially."""
    defs = schema.get("$defs", {})
    cyclic = _recursive(defs)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                short = stub(name) if stub is not None else None
                if short is not None:
                    return short
                if name in cyclic:
                    return {"$ref": ref}
                return walk(defs[name])
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result = walk(schema)
    if not isinstance(result, dict):
        return {}
    kept = {name: walk(defs[name]) for name in sorted(cyclic) if stub is None or stub(name) is None}
    if kept and _mentions(result, kept):
        result["$defs"] = kept
    return result


def _mentions(node: Any, kept: dict[str, Any]) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.removeprefix("#/$defs/") in kept:
            return True
        return any(_mentions(v, kept) for v in node.values())
    if isinstance(node, list):
        return any(_mentions(v, kept) for v in node)
    return False


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
