"""Rule ``call_order`` (STM32): every peripheral instance and GPIO port used has its bus clock on first."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.sdk import Catalog
from rac_fw.domains.firmware.verify.static.model import Call, finding, object_key
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context


def _instance_base(name: str) -> tuple[str, set[str]]:
    trimmed = re.sub(r"_(Stream|Channel)\d+$", "", name)
    return re.sub(r"\d+", "", trimmed), set(re.sub(r"\D", "", trimmed))


_GATED: dict[tuple[int, str], frozenset[str]] = {}


def _gated_bases(catalog: Catalog, macro: str) -> frozenset[str]:
    """Peripheral kinds (``USART``, ``GPIOB``, ``ADC``) that have a clock-enable macro in this catalog.

    Selected by prefix and suffix (plain string tests over the catalog's thousands of names, no regex).
    """
    key = (id(catalog), macro)
    if key not in _GATED:
        prefix, suffix = macro.split("{}")
        cut = len(suffix)
        _GATED[key] = frozenset(
            _instance_base(name[len(prefix) : len(name) - cut])[0]
            for name in catalog.entries
            if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix) + cut
        )
    return _GATED[key]


@register("call_order", "E_CLOCK_NOT_ENABLED")
def check_clocks(ctx: Context) -> list[Evidence]:
    """STM32: every peripheral instance a handle uses, and every GPIO port touched, has its clock on.

    A GPIO port's clock must also be enabled *before* the pin is written or initialized when both happen
    in the same function (writes to an unclocked port are lost).
    """
    program, rules, catalog = ctx.program, ctx.rules, ctx.catalog
    spec = rules.section("clock_enable")
    if not spec:
        return []
    field_name = spec["instance_field"]
    pattern = re.compile("^" + re.escape(spec["macro"]).replace(r"\{\}", r"(\w+?)") + "$")
    gated_bases = _gated_bases(catalog, spec["macro"])
    enables = [(m.group(1), call) for call in program.calls if (m := pattern.match(call.name))]
    uses: list[tuple[str, str, Call | None]] = []
    for name, value, unit, function in program.initializer_fields:
        if name == field_name and value.type == "identifier" and value.text:
            uses.append((value.text.decode(), unit.location(value, function), None))
    for gpio in program.calls:
        if gpio.name in spec.get("gpio_calls", ()):
            port = object_key(gpio.arg_node(0))
            if port:
                body = program.object_macros.get(port, "").strip()
                uses.append((body if body.isidentifier() else port, gpio.location, gpio))
    found: list[Evidence] = []
    for instance, location, call in uses:
        base, digits = _instance_base(instance)
        if base not in gated_bases:
            continue
        macro = spec["macro"].format(instance)
        on = [e for name, e in enables if _instance_base(name)[0] == base and digits <= _instance_base(name)[1]]
        here = [e for e in on if call is not None and e.function == call.function and e.unit is call.unit]
        if not on:
            problem = f"its bus clock is never enabled ({macro} or the family's equivalent is not called)"
        elif call is not None and here and all(e.node.start_byte > call.node.start_byte for e in here):
            problem = f"its bus clock is enabled only afterwards ({here[0].name}, line {here[0].line})"
        else:
            continue
        found.append(
            finding(
                "E_CLOCK_NOT_ENABLED",
                f"{instance} is used{f' by {call.name}' if call else ''} but {problem}",
                location,
                [instance, macro],
                f"call {macro}() before the peripheral or port is first used",
            )
        )
    return found
