"""Rule ``sdk_identifiers_declared``: every SDK identifier a unit uses is declared by a header it includes.

The C compiler sees only what a unit includes, directly or through other headers; the API catalogs know
*that* ``gpio_pin_configure_dt`` exists, the header model (``sdk/headers*.json``) knows *where*: which
header declares each catalog function and macro (the catalog's own header), each type the catalogs'
signatures use, and which SDK header includes which. A unit's visible headers are its ``#include`` lines,
followed through the artifact's own headers (``main.h``, the HAL configuration header) and through the
SDK's include graph. A call or a type whose declaring header is not among them is ``E_UNDECLARED``, with
the header to include — the defect that made every generated Zephyr GPIO app fail to compile
(``struct gpio_dt_spec`` has an incomplete type without ``zephyr/drivers/gpio.h``).

Only ``.c`` files are judged (a header may rely on what its includer included first), calls made through
a macro the artifact defines are judged where the macro is defined, and a header the model does not list
is a leaf: the check never guesses a declaration is missing beyond what the harvested graph shows.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from tree_sitter import Node

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.sdk import release
from rac_fw.domains.firmware.verify.sdk import HeaderModel, catalog_variants, header_model
from rac_fw.domains.firmware.verify.static.model import Unit, finding, function_name
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
def _local(files: dict[str, str], name: str) -> str | None:
    """The artifact file an include names (``main.h`` → ``Inc/main.h``), if the artifact has it."""
    if name in files:
        return name
    return next((p for p in sorted(files) if p.endswith("/" + name)), None)


def visible_headers(files: dict[str, str], text: str, model: HeaderModel) -> tuple[set[str], set[str]]:
    """(every SDK header a file can see, in the model's spelling or as written; the artifact files it reads).

    An application-supplied configuration header the artifact lacks is replaced by the SDK's template.
    """
    seen: set[str] = set()
    local_seen: set[str] = set()
    tried: set[str] = set()
    pending = _INCLUDE.findall(text)
    while pending:
        name = pending.pop()
        if name in tried:
            continue
        tried.add(name)
        path = _local(files, name)
        if path is not None:
            if path not in local_seen:
                local_seen.add(path)
                pending.extend(_INCLUDE.findall(files[path]))
            continue
        known = model.known(name) or model.known(model.stand_ins.get(name, ""))
        if known is None:
            seen.add(name)
            continue
        closure = _sdk_closure(model, known)
        seen |= closure
        # Names the SDK includes but does not ship (the application's configuration header) are the
        # artifact's, or the SDK template's when the artifact has none.
        pending.extend(n for n in closure if n not in model.includes)
    return seen, local_seen


_CLOSURES: dict[tuple[int, str], frozenset[str]] = {}


def _sdk_closure(model: HeaderModel, header: str) -> frozenset[str]:
    """``header`` and every SDK header it includes, transitively (memoized: the models live for the process)."""
    key = (id(model), header)
    closure = _CLOSURES.get(key)
    if closure is None:
        seen: set[str] = set()
        pending = [header]
        while pending:
            name = pending.pop()
            known = model.known(name) or name
            if known not in seen:
                seen.add(known)
                pending.extend(model.includes.get(known, ()))
        closure = _CLOSURES[key] = frozenset(seen)
    return closure


def _configured(model: HeaderModel, local: set[str]) -> set[str]:
    """Headers the artifact's own configuration header decides on (the HAL's module headers).

    Which of them it includes is the ``hal_conf_consistent`` rule's judgement (a disabled module), so this
    rule does not report them a second time.
    """
    names = {path.rsplit("/", 1)[-1] for path in local}
    return {h for name, template in model.stand_ins.items() if name in names for h in model.includes.get(template, ())}


_UNIT_TYPES: WeakKeyDictionary[Unit, list[Node]] = WeakKeyDictionary()


def _type_uses(unit: Unit) -> list[Node]:
    """Type names the unit writes (``struct gpio_dt_spec``, ``UART_HandleTypeDef``), in source order.

    Memoized per unit (units are shared between verifications of unchanged files).
    """
    found = _UNIT_TYPES.get(unit)
    if found is None:
        found = []
        stack = [unit.root]
        while stack:
            node = stack.pop()
            if node.type == "type_identifier":
                found.append(node)
            stack.extend(reversed(node.named_children))
        _UNIT_TYPES[unit] = found
    return found


def _defines_type(unit: Unit, name: str) -> bool:
    """The unit defines ``name`` itself (a tag with a body or a typedef): then no SDK header is needed."""
    word = re.escape(name)
    return bool(re.search(rf"\b(?:struct|union|enum)\s+{word}\s*\{{|\btypedef\b[^;]*\b{word}\s*;", unit.text))


def _include_hint(header: str) -> str:
    """How a header is included (a catalog path such as ``i2c/include/driver/i2c.h`` → ``driver/i2c.h``)."""
    return header.rsplit("include/", 1)[-1]


@register("sdk_identifiers_declared", "E_UNDECLARED")
def check_declared(ctx: Context) -> list[Evidence]:
    model = ctx.headers
    if model is None:
        return []
    program, catalog = ctx.program, ctx.catalog
    # Another variant's headers (an STM32H7 artifact judged as STM32F4): the family mismatch is
    # ``hal_conf_consistent``'s finding, and this model says nothing about that SDK.
    others = [m for v in catalog_variants(ctx.framework) if (m := header_model(ctx.framework, v)) not in (None, model)]
    found: list[Evidence] = []
    for unit in program.units:
        if not unit.path.endswith(".c"):
            continue
        visible, local = visible_headers(ctx.files, unit.text, model)
        if any(o.known(h) for o in others if o is not None for h in visible if model.known(h) is None):
            continue
        visible |= _configured(model, local)
        uses: list[tuple[tuple[int, int], str, str, Node, str]] = []  # (position, name, header, node, function)
        for call in program.calls:
            if call.unit is unit and not call.macro and not program.is_local(call.name):
                where = catalog.entries.get(call.name)
                if where is not None:
                    uses.append((call.node.start_point, call.name, where[0], call.node, call.function))
        for node in _type_uses(unit):
            name = (node.text or b"").decode()
            header = model.types.get(name)
            if header is not None:
                uses.append((node.start_point, name, header, node, ""))
        missing: dict[str, list[tuple[str, Node, str]]] = {}  # header → (identifier, node, function) in order
        for _, name, header, node, function in sorted(uses, key=lambda u: u[0]):
            if header not in visible and model.known(header) not in visible:
                if node.type == "type_identifier" and _defines_type(unit, name):
                    continue
                named = missing.setdefault(header, [])
                if all(name != n for n, _, _ in named):
                    named.append((name, node, function))
        for header, named in missing.items():
            hint = _include_hint(header)
            first, node, function = named[0]
            location = unit.location(node, function or _enclosing(node))
            rest = [n for n, _, _ in named[1:]]
            also = f" (and {', '.join(rest[:6])}{', …' if len(rest) > 6 else ''})" if rest else ""
            found.append(
                finding(
                    "E_UNDECLARED",
                    f"{first}{also} is declared in <{hint}>, which {unit.path} does not include (directly or "
                    f"through the headers it includes): the compiler sees no declaration",
                    location,
                    [first, hint],
                    f"add #include <{hint}> to {unit.path}",
                )
            )
    return found


def _enclosing(node: Node) -> str:
    parent = node.parent
    while parent is not None:
        if parent.type == "function_definition":
            return function_name(parent) or ""
        parent = parent.parent
    return ""


@register("sdk_identifiers_declared", "E_HEADER_RELEASE")
def check_release_headers(ctx: Context) -> list[Evidence]:
    """An include of a header the release spells otherwise (``zephyr/net_buf.h`` is ``zephyr/net/buf.h`` on Zephyr
    3.7, ``facts/sdk.yaml``) names a file that release does not ship: the compiler stops there."""
    written_for = release(ctx.target, ctx.framework)
    if written_for is None or not written_for.headers:
        return []
    found: list[Evidence] = []
    for path in sorted(p for p in ctx.files if p.endswith((".c", ".h", ".overlay"))):
        text = ctx.files[path]
        for match in _INCLUDE.finditer(text):
            spelled = written_for.headers.get(match.group(1))
            if spelled is not None and spelled != match.group(1):
                where = f"{path}:{text.count(chr(10), 0, match.start()) + 1}"
                found.append(finding(
                    "E_HEADER_RELEASE",
                    f"{where} includes <{match.group(1)}>, which {written_for.label} does not have: it is "
                    f"<{spelled}> there",
                    where, [match.group(1), spelled, written_for.label], f"include <{spelled}>",
                ))  # fmt: skip
    return found
