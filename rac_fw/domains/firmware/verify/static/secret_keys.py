"""Check ``no_secret_literal`` (rule ``call_order``: nothing forbidden): key material is never written in C.

The rules files name, per framework, the argument of each key-taking call that carries the key bytes
(``secret_args``: ``psa_import_key`` → 1, ``mbedtls_gcm_setkey`` → 2…). A key that is a string literal, a
compound literal, or an array whose declaration initializes it (``static const uint8_t key[] = {…}``) is
in the firmware image and the source tree: ``E_SECRET_LITERAL``, with the fix the plan vocabulary has —
name a key in ``resources.keys``, whose material the device generates.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.static.model import Call, finding, strip_expression
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context

#: A declaration that gives its object a value: ``= {`` (array/struct initializer) or ``= "`` (string).
_INITIALIZED = re.compile(r"=\s*(\{|\")")
_LITERALS = frozenset({"string_literal", "concatenated_string", "compound_literal_expression", "initializer_list"})


def _literal_key(ctx: Context, call: Call, index: int) -> str | None:
    """The literal or the initialized array that ``call`` passes as key material, if it is one."""
    node = strip_expression(call.arg_node(index))
    while node is not None and node.type in ("pointer_expression", "cast_expression", "subscript_expression"):
        inner = node.child_by_field_name("argument") or node.child_by_field_name("value")
        node = strip_expression(inner)
    if node is None:
        return None
    if node.type in _LITERALS:
        return "a literal"
    if node.type != "identifier":
        return None
    name = node.text.decode() if node.text else ""
    declared = ctx.program.declaration(call.function, name)
    if declared is None or declared.pointer or not declared.dims:
        return None
    return name if _INITIALIZED.search(declared.source()) else None


@register("call_order", "E_SECRET_LITERAL")
def check_secret_literals(ctx: Context) -> list[Evidence]:
    """Key bytes handed to a crypto API come from the device (a generator, a key store), never the source."""
    positions = ctx.rules.section("secret_args")
    found: list[Evidence] = []
    for call in ctx.program.calls:
        if call.name not in positions or ctx.program.is_local(call.name):
            continue
        literal = _literal_key(ctx, call, int(positions[call.name]))
        if literal is None:
            continue
        found.append(
            finding(
                "E_SECRET_LITERAL",
                f"{call.name} is given key material written in the source ({literal}): it ships in every image",
                call.location,
                [call.name, literal],
                "name the key in resources.keys and let the device generate it (psa_generate_key, esp_fill_random)",
            )
        )
    return found
