"""Where a call acts on an object, followed through the helpers that pass the object on.

Objects and call order: a prerequisite must come first *on the same object*. The object is the argument's
base variable (``&huart3`` → ``huart3``); a local pointer initialized with ``&obj`` (and never re-pointed)
stands for ``obj``. When the argument is a *parameter* of the enclosing helper, the object is the caller's:
the call graph is followed to every call site of the helper (up to four levels), and the order is judged
there, at the position of the call into the helper. A parameter of a function no artifact code calls
(a HAL callback, a registered handler) names an object the SDK passes in: then only the presence of the
prerequisite somewhere in the artifact is judged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rac_fw.domains.firmware.verify.static.model import Call, Program, object_key


@dataclass(frozen=True)
class Site:
    """Where a call acts on an object: at the SDK call itself, or at a call into the helper that makes it."""

    key: str | None
    """The object (None: unknown, only the presence of a prerequisite can be judged)."""
    call: Call
    """The call at this position: the SDK call, or the call of the helper in a caller."""
    origin: Call
    """The SDK call."""
    parameter: bool = False
    """``key`` is a parameter of the enclosing function: it names an object only within that function."""
    path: tuple[int, ...] = ()
    """Byte offsets from ``call`` inwards to ``origin`` (through each helper): sites in one function order
    lexicographically, so two calls made inside one helper call keep the helper's own order."""

    def same_object(self, other: Site) -> bool:
        if self.key != other.key or self.parameter != other.parameter:
            return False
        return not self.parameter or (self.call.function == other.call.function and self.call.unit is other.call.unit)

    def describe(self) -> str:
        if self.call is self.origin:
            return f"{self.origin.name} (line {self.origin.line})"
        return f"{self.origin.name} (line {self.call.line}, through {self.call.name}())"


#: How many helper levels a parameter is followed up the call graph.
MAX_HELPER_DEPTH = 4


def callers_of(program: Program) -> dict[str, list[Call]]:
    """Local function → the calls of it made by other artifact functions."""
    found: dict[str, list[Call]] = {}
    for call in program.calls:
        if call.name in program.functions and call.name != call.function:
            found.setdefault(call.name, []).append(call)
    return found


def site_of(program: Program, call: Call, key: str | None, origin: Call) -> Site:
    """The site of ``call`` on ``key`` (a local ``T *p = &obj`` pointer standing for ``obj``).

    ``NULL`` names no object: a helper called with it is judged on presence only.
    """
    path = (call.node.start_byte,) if call is origin else ()
    if key is None or key == "NULL":
        return Site(None, call, origin, path=path)
    key = program.alias(call.function, key) or key
    function = program.functions.get(call.function)
    return Site(key, call, origin, function is not None and key in function.parameters, path)


def caller_sites(program: Program, callers: dict[str, list[Call]], site: Site, depth: int = 0) -> list[Site]:
    """Where the object a helper's *parameter* names comes from: the argument at each call of the helper.

    Followed up to ``MAX_HELPER_DEPTH`` levels; [] when the helper is called by no artifact code (a
    callback the SDK calls) — the object is then the SDK's, unknown here.
    """
    function = program.functions[site.call.function]
    index = function.parameters.index(site.key)
    if depth >= MAX_HELPER_DEPTH:
        return []
    found: list[Site] = []
    for call in callers.get(function.name, ()):
        key = object_key(call.arg_node(index)) if index < len(call.args) else None
        outer = site_of(program, call, key, site.origin)
        outer = replace(outer, path=(call.node.start_byte, *site.path))
        found.extend(caller_sites(program, callers, outer, depth + 1) if outer.parameter else [outer])
    return found
