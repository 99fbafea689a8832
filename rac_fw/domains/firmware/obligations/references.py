"""Names: no duplicates, and every name an operation uses refers to something that exists.

E_DUPLICATE_NAME: two resources/operations share a name (they become one C symbol).
E_THREAD_UNUSED: a declared thread no operation or block names.
E_UNKNOWN_RESOURCE: an operation names a buffer, device, thread, LED, button, operation, memory region
or DMA controller that neither the plan nor the target facts have, or one of the wrong kind.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Hashable
from collections.abc import Set as AbstractSet
from functools import partial
from typing import Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import taken_pins
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import (
    ambiguous_board_name,
    board_button,
    board_led,
    exact_name,
    free_pins,
    normalized,
)
from rac_fw.domains.firmware.obligations.frameworks import FRAMEWORKS
from rac_fw.domains.firmware.obligations.views import unwrap
from rac_fw.domains.firmware.placement import (
    buffer_controller,
    buffer_regions,
    controller_named,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.derived import keyed
from rac_fw.domains.firmware.plan.evidence import Path, add, names_in, proposing, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import section_values, spec

CODE_DUPLICATE = "E_DUPLICATE_NAME"
CODE_UNKNOWN = "E_UNKNOWN_RESOURCE"
CODE_UNUSED_THREAD = "E_THREAD_UNUSED"


Owner = tuple[str, Any]
"""What holds a name: its kind (``buffer``, ``operation``…) and which one (a resource by its place in the
resources, an operation as itself: an operation keeps its entry when others before it are removed)."""


def _resource_owners(plan: Plan) -> dict[str, list[Owner]]:
    found: dict[str, list[Owner]] = {}
    for kind in ("buffers", "pins", "devices", "threads"):
        for i, item in enumerate(getattr(plan.resources, kind)):
            found.setdefault(item.name, []).append((kind[:-1], ("resources", kind, i)))
    return found


class Names(dict[str, tuple[Owner, ...]]):
    """Name → what holds it, in plan order (resources first, then operations): a name held twice is one C symbol
    for two things. Kept per part, so a patch of the resources or of some operations updates it (:func:`_renamed`)."""

    def __init__(self, resources: dict[str, list[Owner]], operations: dict[int, tuple[str, Operation]]):
        super().__init__()
        self.resources, self.operations = resources, operations
        self.changed: set[str] | None = None
        """The entries that may differ from the index this one was brought up from (None: any)."""
        by_name: dict[str, list[Owner]] = {}
        for _, (name, op) in sorted(operations.items(), key=lambda item: item[0]):
            by_name.setdefault(name, []).append(("operation", op))
        for name in resources.keys() | by_name.keys():
            self[name] = (*resources.get(name, ()), *by_name.get(name, ()))


def _renamed(value: Names, plan: Plan, target: Target, changed: set[tuple[Any, ...]]) -> Names | None:
    """``value`` for ``plan`` given what changed: the resources' names taken again when they changed, an
    operation's name when it changed; an operation removed or inserted moves every later one (rebuilt)."""
    if any(w[0] == "shift" or (w[0] == "o" and len(w) == 2) for w in changed):
        return None
    operations = dict(value.operations)
    touched: set[str] = set()
    for write in changed:
        if write[0] == "o" and len(write) == 3 and isinstance(write[1], int):
            old = operations.pop(write[1], None)  # any field: the entry holds the operation itself
            op = unwrap(plan.operations[write[1]])
            if op.name is not None:
                operations[write[1]] = (op.name, op)
            touched |= {n for n in (old[0] if old else None, op.name) if n is not None}
    resources = value.resources
    if any(w[0] == "r" for w in changed):
        resources = _resource_owners(plan)
        touched |= value.resources.keys() | resources.keys()
    fresh = Names(resources, operations)
    fresh.changed = touched
    return fresh


@keyed(update=_renamed)
def name_owners(plan: Plan, target: Target) -> Names:
    """The names index of the plan (:class:`Names`), read by name."""
    named = {i: (op.name, unwrap(op)) for i, op in enumerate(plan.operations) if op.name is not None}
    return Names(_resource_owners(plan), named)


def _duplicate(plan: Plan, target: Target, name: str, owner: Owner, path: Path) -> list[Evidence]:
    """E_DUPLICATE_NAME when ``owner`` (at ``path``) is not the first holder of ``name``."""
    holders = name_owners(plan, target)[name]
    if holders[0][0] == owner[0] and holders[0][1] is owner[1]:
        return []
    kind = owner[0]
    options = []
    if proposing():
        taken = set(name_owners(plan, target))
        rank, suffix = next(i for i, h in enumerate(holders) if h[1] is owner[1]), 1
        for _ in range(rank):
            suffix += 1
            while f"{name[:28]}_{suffix}" in taken:
                suffix += 1
        fresh = f"{name[:28]}_{suffix}"
        options.append(relax(f"rename this {kind} to {fresh!r}", replace(path, fresh)))
    return [
        violation(
            CODE_DUPLICATE,
            f"name {name!r} is used by a {holders[0][0]} and a {kind}; names become C symbols and must be unique",
            path,
            [name],
            relaxations=options,
        )
    ]


def _duplicates(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """E_DUPLICATE_NAME for the resources' names (each operation's name: :func:`_operation_name`)."""
    found: list[Evidence] = []
    for kind in ("buffers", "pins", "devices", "threads"):
        for i, item in enumerate(getattr(plan.resources, kind)):
            owner = next(h for h in name_owners(plan, target)[item.name] if h[1] == ("resources", kind, i))
            found += _duplicate(plan, target, item.name, owner, ["resources", kind, i, "name"])
    return found


def _operation_name(index: int, plan: Plan, target: Target, framework: str) -> list[Evidence]:
    op = plan.operations[index]
    if op.name is None:
        return []
    return _duplicate(plan, target, op.name, ("operation", unwrap(op)), ["operations", index, "name"])


def _choices(wanted: str, candidates: list[str], path: Path, what: str) -> list[Relaxation]:
    """Relaxations replacing an unknown name, closest candidates first."""
    ranked = difflib.get_close_matches(wanted, candidates, n=3, cutoff=0.5)
    ranked += [c for c in candidates if c not in ranked][: max(0, 3 - len(ranked))]
    return [relax(f"use {what} {c!r}", replace(path, c)) for c in ranked]


class References:
    """Collects E_UNKNOWN_RESOURCE evidence for one plan: the shared rule for each kind of name (an endpoint,
    a buffer and the roles it may have, a device and its bus, a thread, an operation of some kinds, a DMA
    controller). Op specs ask it from their checks for the names their fields hold."""

    def __init__(self, plan: Plan, target: Target, framework: str):
        self.plan, self.target, self.framework = plan, target, framework
        self.found: list[Evidence] = []

    @property
    def taken(self) -> AbstractSet[str]:
        """The pins the plan claims (asked only when relaxations are proposed)."""
        return taken_pins(self.plan, self.target) if proposing() else set()

    def unknown(self, message: str, path: Path, objects: list[str], relaxations: list[Relaxation]) -> None:
        self.found.append(violation(CODE_UNKNOWN, message, path, objects, relaxations=relaxations))

    def endpoint(self, name: str, path: Path, output: bool) -> None:
        if self.plan.pin_use(name) is not None:
            return
        board = board_led(self.target, name) if output else board_button(self.target, name)
        if board is not None:
            return
        what = "LED" if output else "button"
        twins = ambiguous_board_name(self.target, name, led=output)
        if twins is not None:
            self.unknown(
                f"{what} {name!r} could mean "
                + " or ".join(f"{exact_name(c)} ({c.name}, {c.pin})" for c in twins.candidates)
                + ": spell the devicetree label or the board name exactly",
                path,
                [name, *(exact_name(c) for c in twins.candidates)],
                [relax(f"use {exact_name(c)} ({c.pin})", replace(path, exact_name(c))) for c in twins.candidates],
            )
            return
        items = self.target.board.leds if output else self.target.board.buttons
        labels = [normalized(x.dt_label or x.name) for x in items]
        labels += [p.name for p in self.plan.resources.pins if p.function == "GPIO"]
        options = _choices(name, labels, path, what)
        free = free_pins(self.target, self.taken, "GPIO") if proposing() else []
        if free:
            declared = {"name": name, "pin": free[0].name, "function": "GPIO"}
            options.append(
                relax(f"declare {name!r} on free pin {free[0].name}", add(["resources", "pins", -1], declared))
            )
        self.unknown(
            f"{what} {name!r} is neither a board {what} of {self.target.board.name} nor a declared pin",
            path,
            [name],
            options,
        )

    def buffer(self, name: str, path: Path, roles: tuple[str, ...]) -> None:
        buffer = self.plan.buffer(name)
        if buffer is None:
            options = _choices(name, [b.name for b in self.plan.resources.buffers if b.role in roles], path, "buffer")
            new = {"name": name, "size_bytes": 256, "role": roles[0], "element_bytes": 2 if "adc" in str(path) else 1}
            options.append(relax(f"declare a {roles[0]} buffer {name!r}", add(["resources", "buffers", -1], new)))
            self.unknown(f"buffer {name!r} is not declared in resources.buffers", path, [name], options)
        elif buffer.role not in roles:
            index = self.plan.resources.buffers.index(buffer)
            self.unknown(
                f"buffer {name!r} has role {buffer.role}, this operation needs {' or '.join(roles)}",
                path,
                [name],
                [
                    relax(
                        f"make {name!r} a {roles[0]} buffer", replace(["resources", "buffers", index, "role"], roles[0])
                    )
                ],
            )

    def device(self, name: str, path: Path, bus: str | None) -> None:
        device = self.plan.device(name)
        labels = {normalized(label) for label in self.target.board.dt_node_labels}
        if device is None and bus is None and normalized(name) in labels:
            return
        if device is None:
            options = _choices(
                name, [d.name for d in self.plan.resources.devices if bus in (None, d.bus)], path, "device"
            )
            self.unknown(f"device {name!r} is not declared in resources.devices", path, [name], options)
        elif bus is not None and device.bus != bus:
            others = [d.name for d in self.plan.resources.devices if d.bus == bus]
            self.unknown(
                f"device {name!r} is on {device.bus}, this operation needs an {bus} device",
                path,
                [name],
                _choices(name, others, path, "device"),
            )

    def thread(self, name: str, path: Path) -> None:
        if self.plan.thread(name) is not None:
            return
        options = _choices(name, [t.name for t in self.plan.resources.threads], path, "thread")
        rules = FRAMEWORKS.get(self.framework)
        stack = max(1024, rules.min_thread_stack_bytes if rules else 0)
        new = {"name": name, "priority": 5, "stack_bytes": stack}
        options.insert(0, relax(f"declare thread {name!r}", add(["resources", "threads", -1], new)))
        self.unknown(f"thread {name!r} is not declared in resources.threads", path, [name], options)

    def operation(self, name: str, path: Path, kinds: frozenset[str], what: str) -> None:
        found = self.plan.operation(name)
        if found is not None and found.op in kinds:
            return
        fitting = [o.name for o in self.plan.operations if o.name and o.op in kinds]
        detail = "no operation has that name" if found is None else f"it is a {found.op}"
        self.unknown(
            f"{name!r} must name {what} operation; {detail}", path, [name], _choices(name, fitting, path, "operation")
        )

    def regions_and_controllers(self) -> None:
        for i, buffer in enumerate(self.plan.resources.buffers):
            base: Path = ["resources", "buffers", i]
            if buffer.dma is not None and controller_named(self.target, buffer.dma) is None:
                names = [c.name for c in self.target.dma]
                options = _choices(buffer.dma, names, [*base, "dma"], "DMA controller")
                options.append(relax("let the operation choose the DMA controller", remove([*base, "dma"])))
                have = ", ".join(names) or "none"
                message = f"{self.target.id} has no DMA controller {buffer.dma!r} (it has: {have})"
                self.unknown(message, [*base, "dma"], [buffer.name, buffer.dma], options)
            if buffer.placement is not None and self.target.region(buffer.placement) is None:
                controller = buffer_controller(self.plan, self.target, buffer.name)
                fits = [r.name for r in buffer_regions(self.target, controller.master if controller else None)]
                options = [relax(f"place {buffer.name!r} in {r}", replace([*base, "placement"], r)) for r in fits[:3]]
                options.append(relax("let rac-fw place it", remove([*base, "placement"])))
                self.unknown(
                    f"{self.target.id} has no memory region {buffer.placement!r}",
                    [*base, "placement"],
                    [buffer.name, buffer.placement],
                    options,
                )

    def op_controller(self, controller: str | None, path: Path, fitting: list[str]) -> None:
        if controller is None or controller_named(self.target, controller) is not None:
            return
        options = _choices(controller, fitting, path, "DMA controller")
        options.append(relax("let rac-fw choose the DMA controller", remove(path)))
        self.unknown(f"{self.target.id} has no DMA controller {controller!r}", path, [controller], options)


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """E_DUPLICATE_NAME and E_UNKNOWN_RESOURCE for every name the plan uses."""
    found = _duplicates(plan, target, framework)
    for index in range(len(plan.operations)):
        found += _operation_name(index, plan, target, framework)
    found += _regions(plan, target, framework)
    found += _unused_threads(plan, target, framework)
    for index in range(len(plan.operations)):
        found += _operation(index, plan, target, framework)
    return found


Unit = tuple[Hashable, Callable[[Plan, Target, str], list[Evidence]]]


def plan_units() -> list[Unit]:
    """:func:`check` as units (``obligations.incremental``): duplicate names, buffers' regions and DMA…"""
    return [
        (("names", "duplicates"), _duplicates),
        (("names", "regions"), _regions),
        (("names", "threads"), _unused_threads),
    ]


def _unused_threads(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """E_THREAD_UNUSED: a declared thread no operation or block names would run nothing (the lowerings start
    a thread only for the work placed on it), so the declaration would silently vanish."""
    if not plan.resources.threads:
        return []
    used = {s for op in plan.operations for s in names_in(op.model_dump(exclude={"name"}))}
    used |= {s for _, value in section_values(plan) for s in names_in(getattr(value, "model_dump", dict)())}
    found: list[Evidence] = []
    for i, thread in enumerate(plan.resources.threads):
        if thread.name in used:
            continue
        path: Path = ["resources", "threads", i]
        found.append(
            violation(
                CODE_UNUSED_THREAD,
                f"thread {thread.name!r} runs nothing: no operation names it (threads run the work operations place "
                "on them: a handoff's receiver, a queue's consumer, a watchdog's feeder …)",
                path,
                [thread.name],
                relaxations=[relax(f"drop thread {thread.name!r}", remove(path))],
            )
        )
    return found




def operation_units(index: int, op: Operation) -> list[Unit]:
    """…and the names each operation uses."""
    return [
        (("names", index, op.op), partial(_operation, index)),
        (("name", index, op.op), partial(_operation_name, index)),
    ]


def _regions(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    refs = References(plan, target, framework)
    refs.regions_and_controllers()
    return refs.found


def _operation(index: int, plan: Plan, target: Target, framework: str) -> list[Evidence]:
    refs = References(plan, target, framework)
    op = plan.operations[index]
    base: Path = ["operations", index]
    for field_name, role in spec(op.op).endpoints.items():
        if getattr(op, field_name) is not None:  # optional endpoints may be unset
            refs.endpoint(getattr(op, field_name), [*base, field_name], output=role == "led")
    device = getattr(op, "device", None)
    if spec(op.op).family == "sensor" and isinstance(device, str):
        refs.device(device, [*base, "device"], None)  # a devicetree sensor node or a declared device
    return refs.found
