"""Check ``release_on_error_paths`` (rule ``call_order``): a handle opened in a function is released on
every early exit after it.

The rules files name, per framework, the calls that open a handle and the calls that release it
(``releases``: ``zsock_socket`` → ``zsock_close``, ``esp_http_client_init`` → ``esp_http_client_cleanup``…),
and for calls that hand the handle back through a pointer argument, that argument's index
(``release_out``: ``zsock_getaddrinfo`` → 3). For each opened handle, every ``return`` and ``goto`` that
leaves the function from inside an ``if`` after the open — an error path — and every ``continue``/``break``
that ends the iteration of a loop which opened the handle, must come after a release of that handle, or
jump to a label followed by one; otherwise the socket, descriptor or client leaks on that path:
``E_HANDLE_LEAK``, located at the exit.

Deliberately not error paths: the branch that tests whether the open itself failed (its condition is the
open call, or compares only the handle with 0, -1 or NULL: nothing was opened), an exit that returns the
handle, and the function's last statement (the success path, where a handle kept in a global is the
point). A release inside ``if (h >= 0)`` / ``if (h != NULL)`` counts for the whole block around it.
Known limit: paths are judged by nesting, not by data flow (a release in an unrelated earlier branch
does not count; one hidden behind a helper function is not seen).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tree_sitter import Node

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.verify.static.model import Call, FunctionDef, declarator_name, finding, strip_expression
from rac_fw.domains.firmware.verify.static.registry import register

if TYPE_CHECKING:
    from rac_fw.domains.firmware.verify.static.context import Context

#: Comparisons that say "the handle is not valid" (the open failed): nothing to release on that branch.
#: (Conditions are compared with their whitespace removed.)
_HANDLE = r"(?P<h>[\w.\->\[\]]+)"
_INVALID = re.compile(rf"^(?:!\(?{_HANDLE}\)?|{_HANDLE.replace('h>', 'g>')}(?:<0|==0|==-1|==NULL|<=-1))$")
#: Conditions that say "the handle is valid" (a release guarded by one counts for the block around it).
_VALID = re.compile(rf"^\(?{_HANDLE}(?:>=0|!=NULL|!=-1|>-1)\)?$|^{_HANDLE.replace('h>', 'g>')}$")


@dataclass(frozen=True)
class Opened:
    """A handle one call opened: the call and the expression naming the handle (``sock``, ``ctx.fd``)."""

    call: Call
    handle: str


def _text(node: Node | None) -> str:
    return re.sub(r"\s+", "", (node.text or b"").decode("utf-8", errors="replace")) if node is not None else ""


def _handle_of(call: Call, out: int | None) -> str | None:
    """The expression the call's handle is stored in: its pointer argument, else what its result is assigned to."""
    if out is not None:  # ``&found``: strip_expression has already taken the address-of away
        arg = strip_expression(call.arg_node(out))
        return _text(arg).lstrip("&") or None if arg is not None else None
    node = call.node
    parent = node.parent
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        node, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        return _text(parent.child_by_field_name("left"))
    if parent.type == "init_declarator":
        name, _ = declarator_name(parent.child_by_field_name("declarator"))
        return name
    return None


def _opened(ctx: Context, function: FunctionDef) -> Iterator[Opened]:
    releases = ctx.rules.section("releases")
    outs = dict(ctx.rules.section("release_out"))
    for call in ctx.program.calls:
        if call.function != function.name or call.name not in releases or ctx.program.is_local(call.name):
            continue
        handle = _handle_of(call, outs.get(call.name))
        if handle is not None:
            yield Opened(call, handle)


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _ancestors(node: Node) -> Iterator[Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _contains(outer: Node, inner: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _condition(if_node: Node) -> str:
    cond = if_node.child_by_field_name("condition")
    text = _text(cond)
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def _is_failure_branch(if_node: Node, opened: Opened) -> bool:
    """The ``if`` tests the open itself: its condition holds the open call or compares only the handle."""
    cond = if_node.child_by_field_name("condition")
    if cond is not None and _contains(cond, opened.call.node):
        return True
    match = _INVALID.match(_condition(if_node))
    return match is not None and opened.handle in (match.group("h"), match.group("g"))


def _releases(ctx: Context, function: FunctionDef, opened: Opened) -> list[Node]:
    """The statements that release the handle, widened to the block around an ``if (h is valid)`` guard."""
    closers = set(ctx.rules.section("releases")[opened.call.name] or ())
    found: list[Node] = []
    for call in ctx.program.calls:
        if call.function != function.name or call.name not in closers:
            continue
        if call.node.start_byte < opened.call.node.end_byte:
            continue
        if not any(_text(strip_expression(a)).lstrip("&") == opened.handle for a in call.args):
            continue
        anchor = call.node
        blocks = 0
        for up in _ancestors(call.node):
            if up.type == "if_statement":
                match = _VALID.match(_condition(up))
                if match is not None and opened.handle in (match.group("h"), match.group("g")):
                    anchor = up
                break
            blocks += up.type == "compound_statement"
            if blocks > 1:
                break
        found.append(anchor)
    return found


def _released_before(exit_node: Node, releases: list[Node]) -> bool:
    """A release precedes the exit in a block that also holds the exit (so the exit's path ran it)."""
    for release in releases:
        if release.start_byte >= exit_node.start_byte:
            continue
        block = next((a for a in _ancestors(release) if a.type == "compound_statement"), None)
        if block is not None and _contains(block, exit_node):
            return True
    return False


def _label_releases(body: Node, label: str, releases: list[Node]) -> bool:
    """The ``goto`` target is followed by a release of the handle."""
    for node in _walk(body):
        if node.type == "labeled_statement" and _text(node.child_by_field_name("label")) == label:
            return any(r.start_byte >= node.start_byte for r in releases)
    return False


_LOOPS = ("for_statement", "while_statement", "do_statement")


def _leaves_scope(node: Node, opened: Opened) -> bool:
    """A ``continue``/``break`` ends the handle's iteration only when its loop opened the handle."""
    if node.type not in ("continue_statement", "break_statement"):
        return True
    targets = (*_LOOPS, "switch_statement") if node.type == "break_statement" else _LOOPS
    loop = next((a for a in _ancestors(node) if a.type in targets), None)
    return loop is not None and loop.type != "switch_statement" and _contains(loop, opened.call.node)


def _leaks(ctx: Context, function: FunctionDef, opened: Opened) -> Iterator[Node]:
    body = function.node.child_by_field_name("body")
    if body is None:
        return
    releases = _releases(ctx, function, opened)
    last = body.named_children[-1] if body.named_children else None
    exits = ("return_statement", "goto_statement", "continue_statement", "break_statement")
    for node in _walk(body):
        if node.type not in exits or node.start_byte < opened.call.node.end_byte:
            continue
        if node == last or not _leaves_scope(node, opened):
            continue
        branches = [a for a in _ancestors(node) if a.type == "if_statement" and _contains(body, a)]
        if not branches or any(_is_failure_branch(b, opened) for b in branches):
            continue
        if node.type == "return_statement" and _text(node).removeprefix("return").rstrip(";") == opened.handle:
            continue
        if node.type == "goto_statement":
            label = _text(node.child_by_field_name("label"))
            if _label_releases(body, label, releases) or _released_before(node, releases):
                continue
        elif _released_before(node, releases):
            continue
        yield node


@register("call_order", "E_HANDLE_LEAK")
def check_released(ctx: Context) -> list[Evidence]:
    """Every handle a function opens is released on each error path out of it."""
    if not ctx.rules.section("releases"):
        return []
    found: list[Evidence] = []
    for function in ctx.program.functions.values():
        for opened in _opened(ctx, function):
            closers = " or ".join(ctx.rules.section("releases")[opened.call.name] or ())
            for exit_node in _leaks(ctx, function, opened):
                word = exit_node.type.removesuffix("_statement")
                found.append(
                    finding(
                        "E_HANDLE_LEAK",
                        f"this {word} leaves {function.name}()'s error path with {opened.handle} still open "
                        f"(opened by {opened.call.name} at line {opened.call.line}): it leaks",
                        function.unit.location(exit_node, function.name),
                        [opened.call.name, opened.handle],
                        f"call {closers} on {opened.handle} before this {word}",
                    )
                )
    return found
