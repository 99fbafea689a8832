"""Rules ``sdk_apis_known`` and ``no_foreign_framework_api``: every SDK call is known, with its arity.

A name no catalog of this framework version declares is a hallucinated API (``E_UNKNOWN_API``, with the
closest real names); one another framework declares is ``E_FOREIGN_API``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.sdk import Catalog, StdLib
from rac_fw.domains.firmware.verify.static.model import Program, finding
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context


def _suggest(name: str, catalog: Catalog) -> list[str]:
    import difflib  # only a failing artifact needs suggestions: keep it off the clean path's import cost

    return difflib.get_close_matches(name, list(catalog.entries), n=3, cutoff=0.72)


def check_apis(
    program: Program, catalog: Catalog, foreign: Callable[[], list[Catalog]], stdlib: StdLib
) -> tuple[list[Evidence], list[Evidence]]:
    """(unknown/arity/deprecated evidence, foreign-framework evidence).

    ``foreign`` yields the other frameworks' catalogs; it is called only when a name is unknown, so a
    clean artifact never pays for loading them.
    """
    unknown: list[Evidence] = []
    foreign_found: list[Evidence] = []
    seen: set[tuple[str, str, str]] = set()
    for call in program.calls:
        name = call.name
        if program.is_local(name) or name in program.variables or name in stdlib:
            continue
        entry = catalog.get(name)
        if entry is not None:
            count = len(call.args)
            if not entry.accepts(count):
                unknown.append(
                    finding(
                        "E_API_ARITY",
                        f"{name} is called with {count} argument(s) but {catalog.label} {catalog.version} "
                        f"declares {entry.signature} in {entry.header}",
                        call.location,
                        [name, entry.header],
                        f"call {entry.signature}",
                    )
                )
            elif entry.deprecated:
                unknown.append(
                    finding(
                        "E_DEPRECATED_API",
                        f"{name} is a deprecated legacy API ({entry.header}) in {catalog.label} {catalog.version}",
                        call.location,
                        [name, entry.header],
                        "use the current driver API of this version",
                    )
                )
            continue
        key = (name, call.unit.path, call.function)
        if key in seen:
            continue
        seen.add(key)
        owner = next((other for other in foreign() if name in other), None)
        if owner is not None:
            owner_entry = owner.get(name)
            header = owner_entry.header if owner_entry else ""
            foreign_found.append(
                finding(
                    "E_FOREIGN_API",
                    f"{name} is a {owner.label} API ({header}); this artifact is {catalog.label} "
                    f"and must not call another framework's API",
                    call.location,
                    [name, owner.label],
                    f"use the {catalog.label} equivalent" + _hint(_suggest(name, catalog)),
                )
            )
            continue
        suggestions = _suggest(name, catalog)
        unknown.append(
            finding(
                "E_UNKNOWN_API",
                f"{call.label} is not declared by {catalog.label} {catalog.version}, the C standard library, nor "
                f"defined in the artifact (hallucinated API?)",
                call.location,
                [name],
                "replace it with a real API" + _hint(suggestions) if suggestions else None,
            )
        )
    return unknown, foreign_found


def _hint(names: list[str]) -> str:
    return f" (closest: {', '.join(names)})" if names else ""


@register("sdk_apis_known", "E_API_ARITY", "E_DEPRECATED_API", "E_UNKNOWN_API")
def known_apis(ctx: Context) -> list[Evidence]:
    return ctx.apis[0]


@register("no_foreign_framework_api", "E_FOREIGN_API")
def foreign_apis(ctx: Context) -> list[Evidence]:
    return ctx.apis[1]
