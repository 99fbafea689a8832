"""Rule ``c_parses``: every C file parses (no tree-sitter ERROR/MISSING node) — ``E_C_PARSE``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.static.model import finding, function_name
from rac_fw.domains.firmware.verify.static.preprocess import node_text
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context


@register("c_parses", "E_C_PARSE")
def check_parse(ctx: Context) -> list[Evidence]:
    program = ctx.program
    found: list[Evidence] = []
    for unit, node in program.parse_errors[:20]:
        function = ""
        parent = node.parent
        while parent is not None:
            if parent.type == "function_definition":
                function = function_name(parent) or ""
                break
            parent = parent.parent
        snippet = node_text(unit.src, node).strip().splitlines()[0][:60] if node.end_byte > node.start_byte else ""
        what = f"missing {node.type!r}" if node.is_missing else f"cannot parse {snippet!r}"
        found.append(finding("E_C_PARSE", f"C syntax error: {what}", unit.location(node, function), [unit.path]))
    return found
