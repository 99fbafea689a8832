"""Rule ``call_order``: prerequisites first on the same object, and no forbidden call.

The rules files say which calls must precede which (``order``) and which calls are forbidden outright
(disabling a watchdog). Objects are resolved through ``sites``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.sdk import OrderRule
from rac_fw.domains.firmware.verify.static.model import Call, Program, finding, object_key
from rac_fw.domains.firmware.verify.static.registry import register
from rac_fw.domains.firmware.verify.static.sites import Site, caller_sites, callers_of, site_of

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context


def _defined_objects(program: Program, macros: frozenset[str]) -> set[str]:
    """Objects created statically by ``K_SEM_DEFINE(name, …)`` and friends (their first argument)."""
    found: set[str] = set()
    for call in program.calls:
        if call.name in macros:
            key = object_key(call.arg_node(0))
            if key:
                found.add(key)
    return found



@register("call_order", "E_CALL_MISSING", "E_CALL_ORDER")
def check_order(ctx: Context) -> list[Evidence]:
    """Prerequisites first, on the same object (see the module docstring for how objects are resolved)."""
    program, rules = ctx.program, ctx.rules
    found: list[Evidence] = []
    reported: set[tuple[str, str, str | None]] = set()
    callers = callers_of(program)
    names = {call.name for call in program.calls}
    for rule in rules.order:

        def key_of(call: Call, rule: OrderRule = rule) -> str | None:
            return None if rule.key is None else object_key(call.arg_node(rule.key_index(call.name)))

        # Each distinct name is matched against the rule once (patterns are regexes), calls by set look-up.
        first_names = rule.first.select(names)
        then_names = rule.then.select(names) - first_names
        if not then_names:
            continue
        firsts: list[Site] = []
        for call in program.calls:
            if call.name in first_names:
                own = site_of(program, call, key_of(call), call)
                firsts.append(own)
                if own.parameter:
                    firsts.extend(caller_sites(program, callers, own))
        defined = _defined_objects(program, rule.defined_by) if rule.defined_by else set()
        for call in program.calls:
            if call.name not in then_names:
                continue
            own = site_of(program, call, key_of(call), call)
            sites = [own]
            if own.parameter and _judge(own, firsts, defined) == ("missing", None):
                # The helper's parameter names the caller's object: judge it where the helper is called.
                sites = caller_sites(program, callers, own) or [replace(own, key=None, parameter=False)]
            for site in sites:
                verdict, first = _judge(site, firsts, defined)
                marker = (call.name, site.call.location, site.key)
                if (
                    verdict == "ok"
                    or marker in reported
                    or (verdict == "missing" and not rule.required)
                    or (verdict == "order" and not rule.ordered)
                ):
                    continue
                reported.add(marker)
                found.append(_order_evidence(site, first, rule))
    return found


def _judge(site: Site, firsts: list[Site], defined: set[str]) -> tuple[str, Site | None]:
    """``ok``; ``order`` with the prerequisite that comes later in the same function; or ``missing``."""
    if site.key is not None and site.key in defined and not site.parameter:
        return "ok", None
    matching = [f for f in firsts if site.key is None or site.same_object(f)]
    same = [f for f in matching if f.call.function == site.call.function and f.call.unit is site.call.unit]
    if any(f.path < site.path for f in same):
        return "ok", None
    if same:
        return "order", same[0]
    return ("ok", None) if matching else ("missing", None)


def _order_evidence(site: Site, first: Site | None, rule: OrderRule) -> Evidence:
    """E_CALL_ORDER when ``first`` (the late prerequisite) is given, else E_CALL_MISSING."""
    call, key = site.origin, site.key
    wanted = " or ".join(rule.first_names)
    on = f" on {key}" if key else ""
    used = f"{call.name}{on}"
    if site.call is not call:
        via = "" if site.call.name == call.function else f", reached through {site.call.name}()"
        used += f" (in {call.function}() at line {call.line}{via})"
    if first is not None:
        return finding(
            "E_CALL_ORDER",
            f"{used} is called before {first.describe()}; {wanted} must come first",
            site.call.location,
            [call.name, first.origin.name] + ([key] if key else []),
            f"call {wanted} before {call.name}",
        )
    return finding(
        "E_CALL_MISSING",
        f"{used} is used but {wanted} is never called{on} in the artifact",
        site.call.location,
        [call.name, *rule.first_names] + ([key] if key else []),
        f"call {wanted}{on} before {call.name}",
    )


@register("call_order", "E_FORBIDDEN_CALL")
def check_forbidden(ctx: Context) -> list[Evidence]:
    program, rules = ctx.program, ctx.rules
    forbidden = rules.section("forbidden")
    return [
        finding("E_FORBIDDEN_CALL", f"{call.name}: {forbidden[call.name]}", call.location, [call.name])
        for call in program.calls
        if call.name in forbidden and not program.is_local(call.name)
    ]
