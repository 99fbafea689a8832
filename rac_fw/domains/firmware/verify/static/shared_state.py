"""Rule ``isr_shared_state_volatile``: file-scope state an ISR writes and a thread reads is volatile/atomic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tree_sitter import Node

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.static.model import finding
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context


def _written_base(node: Node | None) -> Node | None:
    """The identifier a write lands on (``x``, ``s.f``); None for element/pointer writes."""
    while node is not None and node.type in ("parenthesized_expression", "field_expression"):
        if node.type == "field_expression":
            operator = node.child_by_field_name("operator")
            if operator is not None and operator.type == "->":
                return None
            node = node.child_by_field_name("argument")
        else:
            node = node.named_children[0] if node.named_children else None
    return node if node is not None and node.type == "identifier" else None


@register("isr_shared_state_volatile", "E_ISR_SHARED_NOT_VOLATILE")
def check_shared_state(ctx: Context) -> list[Evidence]:
    program, isr = ctx.program, ctx.isr
    found: list[Evidence] = []
    readers: dict[str, str] = {}
    for name, function in program.functions.items():
        if name in isr:
            continue
        local = program.locals_of(function)
        for node in program.lvalue_uses(function):
            if node.type == "identifier" and node.text:
                ident = node.text.decode()
                if ident in program.globals and ident not in local:
                    readers.setdefault(ident, name)
    reported: set[str] = set()
    for name in sorted(isr):
        function = program.functions[name]
        local = program.locals_of(function)
        for node in program.writes.get(name, ()):
            if node.type == "assignment_expression":
                target = _written_base(node.child_by_field_name("left"))
            else:
                target = _written_base(node.child_by_field_name("argument"))
            if target is None or not target.text:
                continue
            variable = target.text.decode()
            shared = program.globals.get(variable)
            if (
                shared is None
                or variable in local
                or variable in reported
                or variable not in readers
                or shared.volatile_or_atomic
            ):
                continue
            reported.add(variable)
            found.append(
                finding(
                    "E_ISR_SHARED_NOT_VOLATILE",
                    f"{variable} ({shared.type_text}, {shared.unit.path}:{shared.line}) is written in interrupt "
                    f"context by {name}() and used by {readers[variable]}(), but is neither volatile nor atomic",
                    function.unit.location(node, name),
                    [variable, name, readers[variable]],
                    f"declare {variable} volatile, or make it atomic (atomic_t / _Atomic)",
                )
            )
    return found
