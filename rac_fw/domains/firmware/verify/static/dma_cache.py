"""Rule ``dma_cache_maintenance``: on a core with a D-cache, DMA cache maintenance judged per buffer.

A transfer's buffers come from its start call: the HAL's ``HAL_DMA_Start(hdma, src, dst, len)`` and
friends name them as arguments (``dma_cache.transfers`` in the rules say which), Zephyr's ``dma_start``
takes them from the ``struct dma_block_config`` that the matching ``dma_config`` call's configuration
heads. A *source* must be cleaned before the start, a *destination* invalidated on the completion path
(after a wait, a flag test or in a callback, before the buffer is read), each with a size that covers
the transfer. A buffer the check cannot name (a pointer, an unresolved helper parameter) keeps the
weaker presence judgement: some clean before the start, some invalidate after it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.sdk import Rules
from rac_fw.domains.firmware.verify.static.model import Call, FunctionDef, Program, declarator_name, finding, object_key
from rac_fw.domains.firmware.verify.static.registry import register
from rac_fw.domains.firmware.verify.static.sites import MAX_HELPER_DEPTH, Site, callers_of, site_of

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context

#: A maintenance call that may cover any buffer: a whole-cache operation, or an address the check cannot
#: tie to one object (never a false alarm).
_ANY = "*"

#: Sizes in bytes of the scalar types buffers are declared with, on the 32-bit cores rac-fw targets.
_TYPE_BYTES = {
    **dict.fromkeys(("char", "signed char", "unsigned char", "uint8_t", "int8_t", "bool", "_Bool"), 1),
    **dict.fromkeys(("short", "unsigned short", "uint16_t", "int16_t"), 2),
    **dict.fromkeys(("int", "unsigned", "unsigned int", "long", "unsigned long", "uint32_t", "int32_t"), 4),
    **dict.fromkeys(("float", "size_t", "uintptr_t"), 4),
    **dict.fromkeys(("long long", "unsigned long long", "uint64_t", "int64_t", "double"), 8),
}

_SIZEOF = re.compile(r"\bsizeof\s*(?:\(\s*([^()]+?)\s*\)|\s+(\w+))")
#: A cast in a size expression (``(int32_t)sizeof(x)``, ``(size_t)N``): it does not change the value.
_SIZE_CAST = re.compile(r"\(\s*(?:const\s+)?(?:(?:un)?signed\s+)?[A-Za-z_]\w*\s*\**\s*\)(?=\s*[\w(])")
_INTEGER = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b")
_ARITHMETIC: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.LShift: lambda a, b: a << b,
}
_LOOPS = frozenset({"for_statement", "while_statement", "do_statement"})


def _arithmetic(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_arithmetic(node.left), _arithmetic(node.right))
    raise ValueError("not a constant")


def _c_integer(digits: str) -> int:
    """A C integer literal's value (hexadecimal, octal with a leading 0, or decimal; suffix removed)."""
    if digits[:2] in ("0x", "0X"):
        return int(digits, 16)
    return int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits)


def _sizeof(program: Program, function: str, operand: str, depth: int) -> int | None:
    """``sizeof(operand)``: a scalar type, or a declared object (elements of a subscript) of one."""
    operand = " ".join(operand.split())
    if operand in _TYPE_BYTES:
        return _TYPE_BYTES[operand]
    match = re.fullmatch(r"(\w+)\s*((?:\[[^\]]*\]\s*)*)", operand)
    declared = program.declaration(function, match.group(1)) if match else None
    if match is None or declared is None or declared.pointer:
        return None
    size = _TYPE_BYTES.get(" ".join(declared.type_text.split()))
    for dim in declared.dims[match.group(2).count("[") :]:
        count = _evaluate(program, function, dim, depth + 1)
        size = None if size is None or count is None else size * count
    return size


def _evaluate(program: Program, function: str, text: str, depth: int = 0) -> int | None:
    """The value of a constant size expression — integer literals, the artifact's object-like macros,
    ``sizeof`` of declared objects and scalar types, casts, ``+ - * / <<`` — or None (not comparable)."""
    if depth > 4:
        return None
    unknown = False

    def size_of(match: re.Match[str]) -> str:
        nonlocal unknown
        value = _sizeof(program, function, match.group(1) or match.group(2), depth)
        unknown = unknown or value is None
        return str(value)

    def macro(match: re.Match[str]) -> str:
        nonlocal unknown
        body = program.object_macros.get(match.group())
        value = None if body is None else _evaluate(program, function, body, depth + 1)
        unknown = unknown or value is None
        return f"({value})"

    text = _SIZE_CAST.sub("", _SIZEOF.sub(size_of, text))
    text = re.sub(r"\b[A-Za-z_]\w*\b", macro, text)
    if unknown:
        return None
    try:
        text = _INTEGER.sub(lambda m: str(_c_integer(m.group(1))), text)
        return _arithmetic(ast.parse(text.replace("/", "//"), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _plain(node: Node | None) -> str:
    """An expression's text without casts, parentheses or blanks (``(uint32_t) ch`` → ``ch``)."""
    while node is not None and node.type in ("parenthesized_expression", "cast_expression"):
        node = node.child_by_field_name("value") if node.type == "cast_expression" else node.named_children[0]
    return re.sub(r"\s+", "", node.text.decode()) if node is not None and node.text else ""


@dataclass(frozen=True)
class _Side:
    """One buffer of a DMA transfer, as the start call (or the configuration it starts) names it."""

    role: str
    """``source`` (the DMA reads it: clean before the start) or ``dest`` (it writes it: invalidate after)."""
    node: Node | None
    function: str
    """The function the buffer and length expressions are written in (their names resolve there)."""
    length: Node | None


def _field_owner(value: Node) -> str | None:
    """The struct variable a designated initializer or a field assignment sets (``block`` of ``block.x = v``)."""
    parent = value.parent
    if parent is not None and parent.type == "assignment_expression":
        left = parent.child_by_field_name("left")
        return object_key(left.child_by_field_name("argument")) if left and left.type == "field_expression" else None
    holder = parent.parent if parent is not None and parent.type == "initializer_pair" else None
    declarator = holder.parent if holder is not None else None
    if declarator is None or declarator.type != "init_declarator":
        return None
    return declarator_name(declarator.child_by_field_name("declarator"))[0]


def _struct_fields(program: Program, function: str, variable: str | None) -> dict[str, tuple[Node, str]]:
    """Field → (value, function) set on ``variable`` in ``function`` or at file scope (later writes win)."""
    found: dict[str, tuple[Node, str]] = {}
    if variable is None:
        return found
    for name, value, _unit, where in program.initializer_fields:
        if where in ("", function) and _field_owner(value) == variable:
            found[name] = (value, where)
    return found


def _configured_sides(program: Program, spec: Mapping[str, Any], start: Call) -> list[_Side] | None:
    """Zephyr: the buffers of the ``struct dma_block_config`` the matching ``dma_config`` call installs.

    The configuration matches when it names the same device and channel; one in the start's own function
    (the last before it) is preferred, else the only one in the artifact. None: no configuration found.
    """
    device = object_key(start.arg_node(spec["start"]["device"]))
    channel = _plain(start.arg_node(spec["start"]["channel"]))
    device = program.alias(start.function, device) or device if device else None
    matching = [
        c
        for c in program.calls_named({spec["call"]})
        if (key := object_key(c.arg_node(spec["device"]))) is not None
        and (program.alias(c.function, key) or key) == device
        and _plain(c.arg_node(spec["channel"])) == channel
    ]
    here = [
        c
        for c in matching
        if c.function == start.function and c.unit is start.unit and c.node.start_byte < start.node.start_byte
    ]
    chosen = here[-1] if here else matching[0] if len(matching) == 1 else None
    if chosen is None:
        return None
    config = _struct_fields(program, chosen.function, object_key(chosen.arg_node(spec["config"])))
    head = config.get(spec["head"])
    block = _struct_fields(program, head[1], object_key(head[0])) if head else {}
    direction = config.get(spec["direction"])
    roles = spec["directions"].get(_plain(direction[0]) if direction else "", ("source", "dest"))
    length = block.get(spec["block"]["length"])
    sides = []
    for role in roles:
        buffer = block.get(spec["block"][role])
        if buffer is not None:
            sides.append(_Side(role, buffer[0], buffer[1], length[0] if length else None))
    return sides


def _transfer_sides(program: Program, rules: Rules, start: Call) -> list[_Side] | None:
    """The buffers ``start`` transfers (None when the rules do not say how to find them)."""
    spec = rules.section("dma_cache")
    transfer = (spec.get("transfers") or {}).get(start.name)
    if transfer is not None:
        length = start.arg_node(transfer["length"])
        return [
            _Side(role, start.arg_node(transfer[role]), start.function, length)
            for role in ("source", "dest")
            if role in transfer
        ]
    configured = spec.get("configured")
    return _configured_sides(program, configured, start) if configured and start.name in configured["starts"] else None


def _positions(program: Program, callers: dict[str, list[Call]], call: Call, key: str) -> list[Site]:
    """``call`` acting on ``key`` seen from its own function and from each caller, up to four levels.

    A parameter key becomes the argument the caller passes; the path keeps the order inside helpers.
    """
    own = site_of(program, call, key, call)
    found = [own]
    frontier = [own]
    for _level in range(MAX_HELPER_DEPTH):
        outer: list[Site] = []
        for site in frontier:
            function = program.functions.get(site.call.function)
            for caller in callers.get(site.call.function, ()) if function is not None else ():
                name = site.key
                if site.parameter and function is not None and name is not None:
                    index = function.parameters.index(name)
                    name = object_key(caller.arg_node(index)) if index < len(caller.args) else None
                if name is not None:
                    lifted = site_of(program, caller, name, site.origin)
                    outer.append(replace(lifted, path=(caller.node.start_byte, *site.path)))
        found += outer
        frontier = outer
    return found


def _is_buffer(program: Program, function: str, key: str | None) -> bool:
    """``key`` owns memory a DMA can move: an array, or a scalar (not a pointer, nor a peripheral handle
    whose register field the DMA addresses, ``&huart3.Instance->TDR``)."""
    declared = program.declaration(function, key) if key else None
    if declared is None or declared.pointer:
        return False
    return bool(declared.dims) or " ".join(declared.type_text.split()) in _TYPE_BYTES


def _maintenance_sites(program: Program, callers: dict[str, list[Call]], calls: list[Call]) -> list[list[Site]]:
    """Each cache call's sites; its buffer is ``_ANY`` for a whole-cache call or an address not tied to an object."""
    found = []
    for call in calls:
        key = object_key(call.arg_node(0)) if call.args else None
        key = program.alias(call.function, key) or key if key else None
        function = program.functions.get(call.function)
        parameter = function is not None and key in function.parameters
        if key is None or not (parameter or _is_buffer(program, call.function, key)):
            key = _ANY
        found.append(_positions(program, callers, call, key))
    return found


def _same_place(a: Site, b: Site) -> bool:
    return a.call.function == b.call.function and a.call.unit is b.call.unit


def _meets(buffer: list[Site], maintenance: list[Site]) -> tuple[Site, Site] | None:
    """The lowest pair (buffer site, maintenance site) in one function acting on the same buffer."""
    for b in buffer:
        for m in maintenance:
            if _same_place(b, m) and (m.key == _ANY or (m.key == b.key and not m.parameter)):
                return b, m
    return None


def _acts_on(buffer: list[Site], maintenance: list[Site]) -> bool:
    keys = {b.key for b in buffer}
    return any(m.key == _ANY or (m.key in keys and not m.parameter) for m in maintenance)


def _ancestors(node: Node) -> list[Node]:
    found = []
    parent = node.parent
    while parent is not None and parent.type != "function_definition":
        found.append(parent)
        parent = parent.parent
    return found


def _in_loop_with(first: Node, second: Node) -> bool:
    """Both nodes lie in one loop: the later one runs before the earlier one's next iteration."""
    return any(a.type in _LOOPS and a.start_byte <= second.start_byte < a.end_byte for a in _ancestors(first))


def _completion_problem(program: Program, rules: Rules, buffer: Site, invalidate: Site) -> str | None:
    """Why an invalidate after the start, in the same function, is not on the completion path (else None).

    Completion is a wait API (``dma_cache.completion_waits``), a call into an artifact helper, a loop, or
    a test enclosing the invalidate, all after the start; the buffer must not be touched before.
    """
    spec = rules.section("dma_cache")
    waits = set(spec.get("completion_waits", ()))
    begin, end = buffer.call.node.end_byte, invalidate.call.node.start_byte
    between = [
        c
        for c in program.calls
        if c.function == buffer.call.function and c.unit is buffer.call.unit and begin <= c.node.start_byte < end
    ]
    touched_by = {*rules.dma_flush.exact, *rules.dma_invalidate.exact, *rules.dma_start_tx.exact}
    touched_by |= {*rules.dma_start_rx.exact, *rules.dma_start_both.exact}
    function = program.functions.get(buffer.call.function)
    for use in program.lvalue_uses(function) if function is not None and buffer.key != _ANY else ():
        if use.type == "identifier" and use.text == (buffer.key or "").encode() and begin <= use.start_byte < end:
            around = _ancestors(use)
            inside = any(a.type == "sizeof_expression" for a in around) or any(
                a.type == "call_expression"
                and (f := a.child_by_field_name("function")) is not None
                and (f.text or b"").decode() in touched_by
                for a in around
            )
            if not inside:
                return f"{buffer.key} is used at line {use.start_point[0] + 1} before it is invalidated"
    waited = any(c.name in waits or c.name in program.functions for c in between)
    enclosing = any(
        a.type in _LOOPS | {"if_statement"} and a.start_byte >= begin and not _in_condition(a, invalidate.call.node)
        for a in _ancestors(invalidate.call.node)
    )
    if waited or enclosing or _loop_between(function, begin, end):
        return None
    return "it is invalidated before anything waits for the transfer to complete"


def _in_condition(statement: Node, node: Node) -> bool:
    """``node`` is part of the statement's own test (``if (invalidate(…) < 0)`` tests no completion flag)."""
    condition = statement.child_by_field_name("condition")
    return condition is not None and condition.start_byte <= node.start_byte < condition.end_byte


def _loop_between(function: FunctionDef | None, begin: int, end: int) -> bool:
    stack = [function.node] if function is not None else []
    while stack:
        node = stack.pop()
        if node.type in _LOOPS and begin <= node.start_byte and node.end_byte <= end:
            return True
        if node.end_byte > begin and node.start_byte < end:
            stack.extend(node.named_children)
    return False


def _covers(program: Program, maintenance: Site, side: _Side, names: set[str]) -> str | None:
    """Why the maintenance range is shorter than the transfer (None: it covers it, or sizes don't compare)."""
    if maintenance.key == _ANY:
        return None
    size = maintenance.origin.arg_node(1)
    if size is None or side.length is None:
        return None
    size_text, length_text = _plain(size), _plain(side.length)
    if size_text == length_text or any(re.fullmatch(rf"sizeof\(?{re.escape(n)}\)?", size_text) for n in names):
        return None
    covered = _evaluate(program, maintenance.origin.function, (size.text or b"").decode())
    needed = _evaluate(program, side.function, (side.length.text or b"").decode())
    if covered is None or needed is None or covered >= needed:
        return None
    return (
        f"{maintenance.origin.name} (line {maintenance.origin.line}) covers {covered} bytes while the transfer "
        f"({length_text}) moves at least {needed}"
    )


def _exempt(program: Program, rules: Rules, function: str, key: str, uncached: frozenset[str]) -> bool:
    """The buffer's own declaration puts it in memory the D-cache does not hold (marker or section)."""
    declared = program.declaration(function, key)
    if declared is None:
        return False
    text = declared.source()
    if any(marker in text for marker in rules.section("dma_cache").get("noncacheable_markers", ())):
        return True
    sections = {part.upper() for quoted in re.findall(r'"([^"\n]*)"', text) for part in re.split(r"[^\w]+", quoted)}
    return bool(sections & uncached)


@register(
    "dma_cache_maintenance", "E_CACHE_FLUSH_MISSING", "E_CACHE_INVALIDATE_MISSING", "E_CACHE_ORDER", "E_CACHE_RANGE"
)
def check_dma_cache(ctx: Context) -> list[Evidence]:
    """On a core with a D-cache: each DMA source cleaned before its start, each destination invalidated on
    the completion path, each with a range covering the transfer (see the section comment above).

    ``uncached``: upper-case names of memory regions the target does not cache (a buffer placed in one by
    its section needs no maintenance).
    """
    program, rules, cache_present, uncached = ctx.program, ctx.rules, ctx.cache_present, ctx.uncached_regions
    spec = rules.section("dma_cache")
    everywhere = " ".join(unit.text for unit in program.units)
    if not cache_present or any(marker in everywhere for marker in spec.get("noncacheable_config", ())):
        return []
    callers = callers_of(program)
    flushes = _maintenance_sites(program, callers, [c for c in program.calls if c.name in rules.dma_flush])
    invalidates = _maintenance_sites(program, callers, [c for c in program.calls if c.name in rules.dma_invalidate])
    anywhere_exempt = any(marker in everywhere for marker in spec.get("noncacheable_markers", ()))
    found: list[Evidence] = []
    for start in program.calls:
        roles = set()
        if start.name in rules.dma_start_tx or start.name in rules.dma_start_both:
            roles.add("source")
        if start.name in rules.dma_start_rx or start.name in rules.dma_start_both:
            roles.add("dest")
        if not roles:
            continue
        sides = [s for s in _transfer_sides(program, rules, start) or () if s.role in roles]
        named: set[str] = set()
        for side in sides:
            key = object_key(side.node)
            key = program.alias(side.function, key) or key if key else None
            own = program.functions.get(side.function)
            if key is None or (side.function != start.function and own is not None and key in own.parameters):
                continue
            sites = [
                s
                for s in _positions(program, callers, start, key)
                if s.key and not s.parameter and _is_buffer(program, s.call.function, s.key)
            ]
            if not sites:
                continue
            named.add(side.role)
            if _exempt(program, rules, sites[0].call.function, sites[0].key or "", uncached):
                continue
            judge = _judge_source if side.role == "source" else _judge_dest
            problem = judge(program, rules, start, side, sites, flushes if side.role == "source" else invalidates)
            if problem is not None:
                found.append(problem)
        if not anywhere_exempt:
            found += _presence(start, roles - named, flushes, invalidates, rules)
    return found


def _judge_source(
    program: Program, rules: Rules, start: Call, side: _Side, sites: list[Site], flushes: list[list[Site]]
) -> Evidence | None:
    buffer = sites[0].key or ""
    where = f"{start.name} (line {start.line} in {start.function}())"
    before: list[Site] = []
    late: list[Site] = []
    for maintenance in flushes:
        pair = _meets(sites, maintenance)
        if pair is not None:
            (before if pair[1].path < pair[0].path else late).append(pair[1])
    if not before:
        if late:
            return finding(
                "E_CACHE_ORDER",
                f"{buffer} is cleaned by {late[0].origin.name} (line {late[0].origin.line}) only after {where} "
                "starts the DMA that reads it: the DMA may read stale memory",
                start.location,
                [buffer, start.name, late[0].origin.name],
                f"clean {buffer} before {start.name}",
            )
        return finding(
            "E_CACHE_FLUSH_MISSING",
            f"{buffer} is read by the DMA that {where} starts, but its D-cache range is not cleaned before the "
            f"start ({' / '.join(sorted(rules.dma_flush.exact))})",
            start.location,
            [buffer, start.name],
            f"clean {buffer} (its whole size) before {start.name}, or place it in non-cacheable memory",
        )
    shorts = [_covers(program, m, side, {buffer, object_key(side.node) or ""}) for m in before]
    if all(shorts):
        return _range_evidence(buffer, start, where, str(shorts[0]), "clean")
    return None


def _judge_dest(
    program: Program, rules: Rules, start: Call, side: _Side, sites: list[Site], invalidates: list[list[Site]]
) -> Evidence | None:
    buffer = sites[0].key or ""
    where = f"{start.name} (line {start.line} in {start.function}())"
    after: list[Site] = []
    early: list[tuple[Site, str]] = []
    only_before: Site | None = None
    for maintenance in invalidates:
        pair = _meets(sites, maintenance)
        if pair is None:
            if _acts_on(sites, maintenance):
                after.append(maintenance[0])  # elsewhere: a completion callback or a later step
            continue
        b, m = pair
        if m.path < b.path and not _in_loop_with(b.call.node, m.call.node):
            only_before = only_before or m
            continue
        problem = None if m.path < b.path else _completion_problem(program, rules, b, m)
        if problem is None:
            after.append(m)
        else:
            early.append((m, problem))
    if not after:
        if early:
            m, problem = early[0]
            return finding(
                "E_CACHE_ORDER",
                f"{buffer} is written by the DMA that {where} starts, but at {m.origin.name} (line {m.origin.line}) "
                f"{problem}",
                start.location,
                [buffer, start.name, m.origin.name],
                f"invalidate {buffer} after the transfer completes (after its wait, flag or callback), before use",
            )
        when = f" (only before it, line {only_before.origin.line})" if only_before is not None else ""
        return finding(
            "E_CACHE_INVALIDATE_MISSING",
            f"{buffer} is written by the DMA that {where} starts, but its D-cache range is never invalidated "
            f"after completion{when} ({' / '.join(sorted(rules.dma_invalidate.exact))})",
            start.location,
            [buffer, start.name],
            f"invalidate {buffer} after the transfer completes, before reading it",
        )
    shorts = [_covers(program, m, side, {buffer, object_key(side.node) or ""}) for m in after]
    if all(shorts):
        return _range_evidence(buffer, start, where, str(shorts[0]), "invalidate")
    return None


def _range_evidence(buffer: str, start: Call, where: str, short: str, verb: str) -> Evidence:
    return finding(
        "E_CACHE_RANGE",
        f"{buffer} is transferred by the DMA that {where} starts, but {short}",
        start.location,
        [buffer, start.name],
        f"{verb} the whole transfer: sizeof({buffer}) or the transfer's length",
    )


def _presence(
    start: Call, roles: set[str], flushes: list[list[Site]], invalidates: list[list[Site]], rules: Rules
) -> list[Evidence]:
    """Buffers the check cannot name: some clean before the start in its function, some invalidate after."""
    found: list[Evidence] = []
    here = [s[0] for s in flushes if s[0].call.function == start.function and s[0].call.unit is start.unit]
    if "source" in roles and not any(s.call.node.start_byte < start.node.start_byte for s in here):
        found.append(
            finding(
                "E_CACHE_ORDER" if here else "E_CACHE_FLUSH_MISSING",
                f"{start.name} starts a DMA that reads memory but the D-cache is not cleaned "
                f"({' / '.join(sorted(rules.dma_flush.exact))}) before it in {start.function}()",
                start.location,
                [start.name],
                "clean the buffer range before the start, or place the buffer in non-cacheable memory",
            )
        )
    after = [
        s[0]
        for s in invalidates
        if not (s[0].call.function == start.function and s[0].call.unit is start.unit)
        or s[0].call.node.start_byte > start.node.start_byte
    ]
    if "dest" in roles and not after:
        found.append(
            finding(
                "E_CACHE_INVALIDATE_MISSING",
                f"{start.name} starts a DMA that writes memory but the D-cache range is never "
                f"invalidated after completion ({' / '.join(sorted(rules.dma_invalidate.exact))})",
                start.location,
                [start.name],
                "invalidate the destination range after the transfer completes, before reading it",
            )
        )
    return found
