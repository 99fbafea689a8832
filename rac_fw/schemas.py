"""JSON Schema helpers shared by the CLI, the MCP server and the domains' catalogs."""

from __future__ import annotations

from typing import Any


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$defs`` references so a model's schema stands alone (inside a tool's parameters too)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs[ref.removeprefix("#/$defs/")])
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result = walk(schema)
    return result if isinstance(result, dict) else {}
