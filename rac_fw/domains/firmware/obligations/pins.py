"""Pin obligations: each pin exists, carries its signal, is used once, and is free to use.

E_UNKNOWN_PIN, E_PIN_FUNCTION (the pin cannot carry the signal: no alternate function / routing),
E_ANALOG_PIN (ADC channel on a pin without an analog input), E_PIN_CONFLICT (one pin, two owners),
E_PIN_RESERVED (debug, crystal, flash/PSRAM or board wiring), E_PIN_STRAPPING (boot strap pin),
E_NFC_PIN (pin owned by the NFC antenna until reconfigured). Relaxations name the free pins that can
carry the signal, with their alternate-function number where the chip has one.

One rule for every repair offered here (:class:`Offers`): a free pin offered to one claim is not
offered to another in the same validation, so taking the first repair of each violation never puts two
claims on one pin again (two devices in conflict were both offered the same free pin).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Hashable, Iterable
from collections.abc import Set as AbstractSet
from functools import partial

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import Claim, operation_claims, pin_partners, resource_claims, taken_pins
from rac_fw.domains.firmware.facts.model import Pin, Target
from rac_fw.domains.firmware.facts.query import adc_unit_of, board_wiring, carries, free_pins, normalized
from rac_fw.domains.firmware.facts.radio import blocked_adc
from rac_fw.domains.firmware.obligations.radio import wifi_station_index
from rac_fw.domains.firmware.obligations.refs import describe_pin, wired_signals
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.derived import shared
from rac_fw.domains.firmware.plan.evidence import add, proposing, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan


class Offers:
    """The pins the plan takes, and the free pins already offered as repairs during one validation, by
    claim (``Claim.key``: every violation of one claim is offered the same pins)."""

    def __init__(self, taken: AbstractSet[str]):
        self.taken = taken
        self.offered: dict[str, set[str]] = {}

    def elsewhere(self, claim: Claim) -> set[str]:
        """Pins already offered to another claim."""
        return {pin for key, pins in self.offered.items() if key != claim.key for pin in pins}

    def excluded(self, claim: Claim) -> set[str]:
        """Free pins a repair of ``claim`` must not propose: taken, or offered to another claim."""
        return set(self.taken) | self.elsewhere(claim)

    def note(self, claim: Claim, pins: Iterable[str]) -> None:
        self.offered.setdefault(claim.key, set()).update(pins)


@shared
def _offers(plan: Plan, target: Target) -> Offers:
    """One :class:`Offers` per plan and validation: the units of one check share it, in plan order."""
    return Offers(taken_pins(plan, target))


def _wired_to(target: Target, signal: str) -> list[Pin]:
    """Pins the board wires to ``signal`` itself (the console's ``USART2_TX``): declaring one as that
    signal is its intended use, not a conflict with the board."""
    return [
        pin
        for pin in target.pins.values()
        if (wiring := board_wiring(target, pin.name)) and signal in wired_signals(wiring) and not pin.reserved
    ]


def _moves(target: Target, claim: Claim, offers: Offers, signal: str, limit: int = 4) -> list[Relaxation]:
    """Relaxations moving ``claim`` to a pin able to carry ``signal``: the pin the board wires to that
    signal, then free pins (nearest first)."""
    if not claim.declared or not proposing():
        return []
    elsewhere = offers.elsewhere(claim)  # the board's own pin for the signal may be taken by that very use
    pins = [p for p in _wired_to(target, signal)
            if p.name != claim.pin and p.name not in elsewhere and carries(p, signal)]  # fmt: skip
    pins = (pins + free_pins(target, offers.excluded(claim), signal, near=claim.pin))[:limit]
    offers.note(claim, (pin.name for pin in pins))
    return [relax(f"use {describe_pin(pin, signal)} instead of {claim.pin}", replace(claim.path, pin.name))
            for pin in pins]  # fmt: skip


def _analog_moves(plan: Plan, target: Target, claim: Claim, offers: Offers) -> list[Relaxation]:
    if not proposing():
        return []
    blocked = blocked_adc(target) if wifi_station_index(plan) is not None else None
    pins = [
        p
        for p in free_pins(target, offers.excluded(claim), "ANALOG", near=claim.pin)
        if not (blocked and any(adc_unit_of(a) == blocked for a in p.analog))
    ][:4]
    offers.note(claim, (p.name for p in pins))
    return [
        relax(f"use {p.name} ({', '.join(p.analog)}) instead of {claim.pin}", replace(claim.path, p.name)) for p in pins
    ]


def _conflict_fix(plan: Plan, target: Target, first: Claim, later: Claim, offers: Offers) -> list[Relaxation]:
    """Move whichever of the two uses the plan chose itself; otherwise pick another board LED/pin."""
    if not proposing():
        return []
    for mover in (later, first):
        if mover.signal == "ANALOG":
            moves = _analog_moves(plan, target, mover, offers)
        else:
            moves = _moves(target, mover, offers, mover.signal)
        if moves:
            return moves
    fixes: list[Relaxation] = []
    for mover in (m for m in (later, first) if not m.declared):
        fixes += _rebind(target, mover, offers)
    return fixes


def _rebind(target: Target, mover: Claim, offers: Offers) -> list[Relaxation]:
    """Point an operation's LED/output/button at another board LED or a newly declared free pin."""
    fixes: list[Relaxation] = []
    excluded = offers.excluded(mover)
    if mover.path[-1] in ("led", "output"):
        for led in target.board.leds:
            if led.pin not in excluded:
                label = normalized(led.dt_label or led.name)
                offers.note(mover, [led.pin])
                fixes.append(relax(f"use board LED {label} ({led.pin})", replace(mover.path, label)))
    free = free_pins(target, excluded, "GPIO", near=mover.pin)
    if free and mover.path[-1] in ("led", "output", "button"):
        name = f"{mover.path[-1]}_{free[0].name.lower().replace('.', '_')}"
        offers.note(mover, [free[0].name])
        fixes.append(
            relax(
                f"declare pin {name!r} on free {free[0].name} and use it",
                add(["resources", "pins", -1], {"name": name, "pin": free[0].name, "function": "GPIO"}),
                replace(mover.path, name),
            )
        )
    return fixes


def _function_error(target: Target, pin: Pin, claim: Claim, offers: Offers) -> Evidence:
    carried = sorted({f.signal for f in pin.functions if f.signal.split("_")[0] == claim.signal.split("_")[0]})
    hint = f"; it can carry {', '.join(carried)}" if carried else ""
    return violation(
        "E_PIN_FUNCTION",
        f"{pin.name} cannot carry {claim.signal} (no alternate function or routing for it){hint}",
        claim.path,
        [pin.name, claim.signal, claim.owner],
        relaxations=_moves(target, claim, offers, claim.signal),
    )


def _shared(first: Claim, later: Claim) -> bool:
    """Uses that may share a pin: two reads of one analog input, or the console pin declared as itself."""
    if first.signal == later.signal == "ANALOG":
        return True
    return first.signal == later.signal and "console" in (first.key, later.key)


Unit = tuple[Hashable, Callable[[Plan, Target, str], list[Evidence]]]


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """All pin obligations over the plan's claims: the resources', then each operation's."""
    found = _resources(plan, target, framework)
    for index in range(len(plan.operations)):
        found += _operation(index, plan, target, framework)
    return found


def plan_units() -> list[Unit]:
    """:func:`check` as units (``obligations.incremental``): the resources' claims…"""
    return [(("pins", "resources"), _resources)]


def operation_units(index: int, op: Operation) -> list[Unit]:
    """…and each operation's."""
    return [(("pins", index, op.op), partial(_operation, index))]


def _resources(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    return _judge(plan, target, -1, resource_claims(plan))


def _operation(index: int, plan: Plan, target: Target, framework: str) -> list[Evidence]:
    return _judge(plan, target, index, operation_claims(plan, target, index, plan.operations[index]))


def _judge(plan: Plan, target: Target, position: int, uses: list[Claim]) -> list[Evidence]:
    """The claims made at ``position`` against the chip's pins and against the claim each is judged
    against on its pin (``claims.pin_partners``)."""
    found: list[Evidence] = []
    offers = _offers(plan, target) if uses and proposing() else Offers(frozenset())
    for rank, claim in enumerate(uses):
        pin = target.pins.get(claim.pin)
        if pin is None and not claim.declared:
            continue  # an operation driving a declared pin: the declaration is where it is reported
        if pin is None:
            if claim.signal == "ANALOG":
                options = _analog_moves(plan, target, claim, offers)
            else:
                usable = (
                    {p.name: p for p in free_pins(target, offers.excluded(claim), claim.signal)} if proposing() else {}
                )
                close = difflib.get_close_matches(claim.pin, list(usable), n=3, cutoff=0.6)
                close += [name for name in usable if name not in close][: max(0, 4 - len(close))]
                offers.note(claim, close)
                options = [
                    relax(f"use {describe_pin(usable[name], claim.signal)}", replace(claim.path, name))
                    for name in close
                ]
            found.append(
                violation(
                    "E_UNKNOWN_PIN",
                    f"{target.id} has no pin {claim.pin}",
                    claim.path,
                    [claim.pin, claim.owner],
                    relaxations=options,
                )
            )
            continue
        first = pin_partners(plan, target)[(claim.pin, position, rank)]
        two_drivers = first.driver is not None and first.driver != claim.driver
        if first != claim and (first.key != claim.key or two_drivers) and not _shared(first, claim):
            what = f"{claim.owner} ({claim.signal})"
            if first.key == claim.key:
                what = f"operations[{claim.driver}] too: one output, two drivers"
            found.append(
                violation(
                    "E_PIN_CONFLICT",
                    f"{claim.pin} is used by {first.owner} ({first.signal}) and by {what}",
                    claim.path,
                    [claim.pin, first.owner, claim.owner],
                    relaxations=_conflict_fix(plan, target, first, claim, offers),
                )
            )
        if not claim.declared:
            continue
        if claim.signal == "ANALOG":
            if not pin.analog:
                found.append(
                    violation(
                        "E_ANALOG_PIN",
                        f"{pin.name} has no analog input (ADC channel)",
                        claim.path,
                        [pin.name, claim.owner],
                        relaxations=_analog_moves(plan, target, claim, offers),
                    )
                )
        elif not carries(pin, claim.signal):
            found.append(_function_error(target, pin, claim, offers))
        found.extend(_availability(target, pin, claim, offers))
    return found


def _availability(target: Target, pin: Pin, claim: Claim, offers: Offers) -> list[Evidence]:
    """Reserved, board-wired, strapping and NFC pins chosen by the plan."""
    signal = claim.signal
    wiring = board_wiring(target, pin.name)
    found: list[Evidence] = []
    if pin.reserved or (wiring and not wiring.startswith("a board") and claim.signal not in wired_signals(wiring)):
        why = pin.reserved or f"the board wires it to {wiring}"
        found.append(
            violation(
                "E_PIN_RESERVED",
                f"{pin.name} is reserved: {why}",
                claim.path,
                [pin.name, claim.owner],
                relaxations=_moves(target, claim, offers, signal),
            )
        )
    if pin.strapping:
        found.append(
            violation(
                "E_PIN_STRAPPING",
                f"{pin.name} is a boot strapping pin: an external level on it at reset changes the boot mode",
                claim.path,
                [pin.name, claim.owner],
                relaxations=_moves(target, claim, offers, signal),
            )
        )
    if pin.requires:
        found.append(
            violation(
                "E_NFC_PIN",
                f"{pin.name} belongs to the NFC antenna until reconfigured ({'; '.join(pin.requires)}), "
                "a setting kept in UICR across reflashes; pick a plain GPIO",
                claim.path,
                [pin.name, claim.owner],
                relaxations=_moves(target, claim, offers, signal),
            )
        )
    return found
