"""Rule ``return_values_checked``: the result of every fallible SDK or libc call is tested."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tree_sitter import Node

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.sdk import ApiEntry, Rules, StdLib
from rac_fw.domains.firmware.verify.static.model import Call, FunctionDef, Program, declarator_name, finding
from rac_fw.domains.firmware.verify.static.preprocess import node_text
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context


def is_fallible(call: Call, entry: ApiEntry | None, rules: Rules, stdlib: StdLib) -> str | None:
    """Why the call's result must be tested (None when it need not)."""
    name = call.name
    fallible = rules.section("fallible")
    forever = dict(fallible.get("forever_args") or {})
    if name in forever and call.arg_text(forever[name]) in set(fallible.get("forever_tokens", ())):
        return None
    if name in rules.fallible_exclude:
        return None
    if name in rules.null_on_failure or name in stdlib.null_on_failure:
        return "returns NULL on failure"
    if name in rules.fallible_include:
        return "returns a status that can report failure"
    if entry is None or entry.kind != "function":
        return None
    headers = tuple(fallible.get("return_headers", ("",)))
    if entry.returns in set(fallible.get("returns", ())) and entry.header.startswith(headers):
        return f"returns {entry.returns} (error code)"
    return None


def _first_use_after(program: Program, function: FunctionDef, variable: str, after: int) -> Node | None:
    """The first expression spelling ``variable`` (whitespace aside) that starts at or after ``after``."""
    plain = variable.encode()
    for node in program.lvalue_uses(function):
        if node.start_byte < after or node.end_byte - node.start_byte < len(plain):
            continue
        if node.text == plain or (node.type != "identifier" and re.sub(rb"\s+", b"", node.text or b"") == plain):
            return node
    return None


def _result_checked(call: Call, program: Program) -> tuple[bool, str]:
    if call.expansion is not None and not call.whole:  # judged inside the macro's own body
        inner = call.expansion.parent
        while inner is not None and inner.type in ("parenthesized_expression", "cast_expression"):
            inner = inner.parent
        discarded = inner is not None and inner.type == "expression_statement"
        return (False, f"discarded inside macro {call.macro}") if discarded else (True, "")
    node = call.node
    parent = node.parent
    discarded_by_cast = False
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        if parent.type == "cast_expression":
            discarded_by_cast = True
        node, parent = parent, parent.parent
    if parent is None:
        return True, ""
    if parent.type == "expression_statement":
        return False, "discarded with a (void) cast" if discarded_by_cast else "discarded"
    variable: str | None = None
    anchor = parent
    if parent.type == "assignment_expression":
        outer = parent.parent
        while outer is not None and outer.type == "parenthesized_expression":
            outer = outer.parent
        if outer is not None and outer.type != "expression_statement":
            return True, ""  # ``if ((ret = f()) < 0)``: the assigned value is tested on the spot
        operator = parent.child_by_field_name("operator")
        right = parent.child_by_field_name("right")
        left = parent.child_by_field_name("left")
        if operator is not None and operator.type == "=" and right == node and left is not None:
            variable = re.sub(r"\s+", "", node_text(call.unit.src, left))
    elif parent.type == "init_declarator":
        variable, _ = declarator_name(parent.child_by_field_name("declarator"))
    if variable is None:
        return True, ""
    function = program.function_of(call)
    if function is None:
        return True, ""
    use = _first_use_after(program, function, variable, anchor.end_byte)
    if use is None:
        return False, f"stored in {variable} but never tested"
    use_parent = use.parent
    if (
        use_parent is not None
        and use_parent.type == "assignment_expression"
        and use_parent.child_by_field_name("left") == use
        and (op := use_parent.child_by_field_name("operator")) is not None
        and op.type == "="
    ):
        return False, f"stored in {variable} and overwritten (line {use.start_point[0] + 1}) before being tested"
    return True, ""


@register("return_values_checked", "E_UNCHECKED_RETURN")
def check_returns(ctx: Context) -> list[Evidence]:
    program, rules, catalog, stdlib = ctx.program, ctx.rules, ctx.catalog, ctx.stdlib
    found: list[Evidence] = []
    for call in program.calls:
        if not call.function or program.is_local(call.name):
            continue
        reason = is_fallible(call, catalog.get(call.name), rules, stdlib)
        if reason is None:
            continue
        checked, how = _result_checked(call, program)
        if not checked:
            found.append(
                finding(
                    "E_UNCHECKED_RETURN",
                    f"the result of {call.label} ({reason}) is {how}",
                    call.location,
                    [call.name],
                    f"test the result of {call.name} and handle the failure",
                )
            )
    return found
