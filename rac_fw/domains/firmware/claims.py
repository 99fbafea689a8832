"""The pins a plan takes: every (pin, signal, owner) its resources and operations claim, found once.

The pin obligations judge these claims (conflicts, reservations, routing), and the radio, reference and
support rules ask them which pins are taken; a lowering never does (it reads ``BoundPlan.pins_in_use``).
Operations on the console UART (``Flag.CONSOLE``) take the console pins implicitly; LED/button fields
(``OpSpec.endpoints``) take the board item's pin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.facts.query import board_button, board_led
from rac_fw.domains.firmware.plan.channels import AdcDtChannel, AdcPinChannel
from rac_fw.domains.firmware.plan.derived import keyed, shared
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag

if TYPE_CHECKING:  # op modules import this one while the plan model is being built from them
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.base import Operation
    from rac_fw.domains.firmware.plan.model import Plan
    from rac_fw.domains.firmware.plan.paths import PathPart
    from rac_fw.domains.firmware.plan.resources import PinUse


def uart_instance(target: Target, op: Operation) -> str | None:
    """The UART a console operation (``Flag.CONSOLE``) uses: its ``uart`` or the board console's."""
    named: str | None = getattr(op, "uart", None)
    if named is not None:
        return named
    return target.board.console.uart if target.board.console else None


def is_console(target: Target, instance: str | None) -> bool:
    console = target.board.console
    return console is not None and instance is not None and instance.upper() == console.uart.upper()


@dataclass(frozen=True)
class Claim:
    """A pin the plan takes: which signal, for whom, and where in the plan it was taken."""

    pin: str
    signal: str
    owner: str
    """The plan or board object that holds the pin (shown in evidence)."""
    key: str
    """Identity for conflicts: two claims with the same key are the same use, not a conflict."""
    path: list[PathPart]
    declared: bool
    """True when the plan chose the pin itself (it can simply pick another)."""
    driver: int | None = None
    """Index of the operation driving this output, when an operation drives it (two drivers conflict)."""


def claims(plan: Plan, target: Target) -> list[Claim]:
    """Every pin use of the plan, in plan order (resources first, then operations)."""
    found = resource_claims(plan)
    for i, op in enumerate(plan.operations):
        found += operation_claims(plan, target, i, op)
    return found


@shared
def taken_pins(plan: Plan, target: Target) -> frozenset[str]:
    """Every pin the plan claims (what a relaxation moving a pin must avoid)."""
    return frozenset(c.pin for c in claims(plan, target))


def resource_claims(plan: Plan) -> list[Claim]:
    """The pins the resources take: declared pins and device chip selects."""
    found: list[Claim] = []
    for i, use in enumerate(plan.resources.pins):
        found.append(Claim(use.pin, use.function, use.name, f"pin:{use.name}", ["resources", "pins", i, "pin"], True))
    for i, device in enumerate(plan.resources.devices):
        if device.chip_select:
            path: list[PathPart] = ["resources", "devices", i, "chip_select"]
            found.append(Claim(device.chip_select, "GPIO", device.name, f"cs:{device.name}", path, True))
    return found


def operation_claims(plan: Plan, target: Target, i: int, op: Operation) -> list[Claim]:
    """The pins operation ``i`` takes: its LED/button endpoints (a declared pin of that name, else the board
    item), the console pins, the pins of its ADC channels."""
    declared = tuple(plan.pin_use(name) if name is not None else None for name in endpoint_names(op))
    return list(_operation_claims(target, i, op, declared))


@shared
def endpoint_names(op: Operation) -> tuple[str | None, ...]:
    """The names in the operation's LED/button fields (``OpSpec.endpoints``), None where unset."""
    return tuple(getattr(op, field) for field in spec(op.op).endpoints)


@shared
def _operation_claims(target: Target, i: int, op: Operation, declared: tuple[PinUse | None, ...]) -> tuple[Claim, ...]:
    found: list[Claim] = []
    base: list[PathPart] = ["operations", i]
    for (field, role), use in zip(spec(op.op).endpoints.items(), declared, strict=True):
        name = getattr(op, field)
        if name is None:  # an optional endpoint the operation does not use (sleep without a wake pin)
            continue
        if role == "led":
            led = None if use else board_led(target, name)
            if use is not None:
                found.append(Claim(use.pin, use.function, use.name, f"pin:{use.name}", [*base, field], False, i))
            elif led is not None:
                found.append(Claim(led.pin, "GPIO", led.name, f"led:{led.name}", [*base, field], False, driver=i))
        else:
            button = None if use else board_button(target, name)
            if button is not None:
                found.append(Claim(button.pin, "GPIO", button.name, f"in:{button.name}", [*base, field], False))
    if spec(op.op).has(Flag.CONSOLE):
        console = target.board.console
        if console is not None and is_console(target, uart_instance(target, op)):
            for pin, suffix in ((console.tx, "TX"), (console.rx, "RX")):
                if pin in target.pins:
                    signal = f"{console.uart}_{suffix}"
                    found.append(Claim(pin, signal, "console", "console", [*base, "uart"], False))
    channels = getattr(op, "channels", None) or ([op.channel] if hasattr(op, "channel") else [])
    for j, channel in enumerate(channels):
        if isinstance(channel, AdcPinChannel | AdcDtChannel) and channel.pin is not None:
            where = [*base, "channels", j, "pin"] if hasattr(op, "channels") else [*base, "channel", "pin"]
            owner = op.name or f"operations[{i}]"
            found.append(Claim(channel.pin, "ANALOG", owner, f"adc:{i}:{j}", where, True))
    return tuple(found)


PartnerKey = tuple[str, int, int]
"""A claim on a chip pin: (pin, the position of the operation making it or -1 for the resources, its rank
among that operation's claims)."""


class Partners(dict[PartnerKey, Claim]):
    """Each claim on a chip pin → the claim it is judged against: the pin's first claim in plan order or,
    for a driven output, the first driver before it (two drivers of one output conflict even when they
    name the same LED). Keeps the claims per position and per pin, to be brought up to date (:func:`_moved`)."""

    def __init__(self, pins: frozenset[str], by_position: dict[int, tuple[Claim, ...]], naming: dict[str, set[int]]):
        super().__init__()
        self.pins, self.by_position = pins, by_position
        self.naming = naming
        """Endpoint name → the positions of the operations naming it (a declared pin changing moves their claims)."""
        self.by_pin: dict[str, dict[int, list[tuple[PartnerKey, Claim]]]] = {}
        self.heads: dict[str, tuple[Claim, Claim | None]] = {}
        """Pin → its first claim and first driver: every partner on the pin follows from these two."""
        self.changed: set[PartnerKey] | None = None
        """The entries that may differ from the index this one was brought up from (None: any)."""
        for position, found in by_position.items():
            self._place(position, found)
        for pin in self.by_pin:
            self._judge(pin)

    def keys_on(self, pin: str) -> set[PartnerKey]:
        return {key for items in self.by_pin.get(pin, {}).values() for key, _ in items}

    def _place(self, position: int, found: tuple[Claim, ...]) -> None:
        for rank, claim in enumerate(found):
            if claim.pin in self.pins:
                on_pin = self.by_pin.setdefault(claim.pin, {})
                on_pin.setdefault(position, []).append(((claim.pin, position, rank), claim))

    def _heads(self, pin: str) -> tuple[Claim, Claim | None] | None:
        """The pin's first claim and first driver in plan order (None: no claim on it)."""
        on_pin = self.by_pin.get(pin)
        if not on_pin:
            return None
        positions = sorted(on_pin)
        first = on_pin[positions[0]][0][1]
        driver = next((c for p in positions for _, c in on_pin[p] if c.driver is not None), None)
        return first, driver

    def _judge(self, pin: str, only: set[int] | None = None) -> None:
        """The partners of the claims on ``pin`` (of those made at ``only`` positions when the pin's heads are
        what they were): a claim is judged against the first claim, a driver after the first driver against it."""
        heads = self._heads(pin)
        if heads is None:
            self.heads.pop(pin, None)
            return
        if self.heads.get(pin) != heads:
            only = None
        self.heads[pin] = heads
        first, driver = heads
        on_pin = self.by_pin[pin]
        for position in on_pin if only is None else only & on_pin.keys():
            for key, claim in on_pin[position]:
                late_driver = claim.driver is not None and driver is not None and claim != driver
                self[key] = driver if late_driver and driver is not None else first


def _moved(value: Partners, plan: Plan, target: Target, changed: set[tuple[Any, ...]]) -> Partners | None:
    """``value`` (another plan's partners) for ``plan`` given what changed (``obligations.views.writes``):
    the claims of the operations that changed, of those naming a declared pin that changed and of the
    resources are taken again, and only the pins they claimed or claim are judged again. An operation removed
    or inserted (``shift``) leaves the index as it is when no moved operation claims a chip pin (entries are
    keyed by position), and asks for a rebuild otherwise."""
    shift = next((w for w in changed if w[0] == "shift"), None)
    if shift is not None:
        _, at, step = shift
        moved = [c for p, found in value.by_position.items() if p >= at for c in found if c.pin in value.pins]
        if step > 0:
            moved += [c for c in operation_claims(plan, target, at, plan.operations[at]) if c.pin in value.pins]
        return None if moved or any(w[0] == "r" for w in changed) else value
    positions = {w[1] for w in changed if w[0] == "o" and isinstance(w[1], int)}
    pins = {w[2] for w in changed if w[:2] == ("r", "pins") and w[2] != "*"}
    for name in pins:
        positions |= value.naming.get(name, set())
    if any(w[0] == "r" for w in changed):
        positions.add(-1)
    by_position = dict(value.by_position)
    naming = value.naming
    if positions - {-1}:
        naming = {name: set(at) for name, at in value.naming.items()}
    for position in positions:
        if position == -1:
            by_position[-1] = tuple(resource_claims(plan))
            continue
        for at in naming.values():
            at.discard(position)
        if position < len(plan.operations):
            op = plan.operations[position]
            by_position[position] = tuple(operation_claims(plan, target, position, op))
            for name in endpoint_names(op):
                if name is not None:
                    naming.setdefault(name, set()).add(position)
        else:
            by_position.pop(position, None)
    olds = (c for p in positions for c in value.by_position.get(p, ()))
    touched = {c.pin for c in olds} | {c.pin for p in positions for c in by_position.get(p, ())}
    fresh = Partners(value.pins, {}, naming)
    gone = {key for p in positions for key in _keys(value, p)}
    dict.update(fresh, value)
    for key in gone:
        del fresh[key]
    fresh.by_position = by_position
    fresh.heads = dict(value.heads)
    fresh.by_pin = dict(value.by_pin)
    for pin in touched & value.pins:
        kept = {p: items for p, items in value.by_pin.get(pin, {}).items() if p not in positions}
        if kept:
            fresh.by_pin[pin] = kept
        else:
            fresh.by_pin.pop(pin, None)
    for position in positions & by_position.keys():
        fresh._place(position, by_position[position])
    fresh.changed = set(gone)
    for pin in touched:
        before = fresh.heads.get(pin)
        fresh._judge(pin, positions)
        if fresh.heads.get(pin) != before:  # every partner on the pin was judged again
            fresh.changed |= value.keys_on(pin) | fresh.keys_on(pin)
    fresh.changed |= {key for p in positions for key in _keys(fresh, p)}
    return fresh


def _keys(index: Partners, position: int) -> set[PartnerKey]:
    """The index keys of the claims made at ``position`` (on chip pins)."""
    made = index.by_position.get(position, ())
    return {(c.pin, position, rank) for rank, c in enumerate(made) if c.pin in index.pins}


@keyed(update=_moved)
def pin_partners(plan: Plan, target: Target) -> Partners:
    """The partners index of the plan (:class:`Partners`), read by ``(pin, position, rank)``; the
    resources' claims are at position -1."""
    by_position = {-1: tuple(resource_claims(plan))}
    naming: dict[str, set[int]] = {}
    for i, op in enumerate(plan.operations):
        by_position[i] = tuple(operation_claims(plan, target, i, op))
        for name in endpoint_names(op):
            if name is not None:
                naming.setdefault(name, set()).add(i)
    return Partners(frozenset(target.pins), by_position, naming)
