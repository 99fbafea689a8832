"""The clock tree a plan runs: the framework's default clock setup with what the plan's operations set.

An operation that changes clocks (``core_clock``: a PLL and bus prescalers) declares it in its spec
(``OpSpec.clocks``); this module lays those domains over the facts' ``default_hz`` and hands out one
``facts.query.Clocks`` view. Every check that derives timing from a clock (UART baud error, counter and PWM
prescaler ranges, SPI dividers, SysTick, cycle-counter wraps, counter alarms, CAN bit timing) and every
lowering that computes a divisor at generation time asks this one view, so a core clock request moves them
together with the clock tree the lowering programs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.facts.query import Clocks
from rac_fw.domains.firmware.plan.derived import keyed, shared
from rac_fw.domains.firmware.plan.registry import spec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.base import Operation
    from rac_fw.domains.firmware.plan.model import Plan


def plan_clocks(plan: Plan, target: Target, framework: str) -> Clocks:
    """The clocks ``plan`` runs on ``target`` under ``framework``: an operation's ``clocks`` count only where
    the framework realizes it (elsewhere the support rule refuses the plan and the defaults stand)."""
    return Clocks(target, framework, clock_requests(plan, target).get(framework, {}))


class Requests(dict[str, dict[str, int]]):
    """Framework → the clock domains the plan's operations set under it (a later operation's setting wins),
    with each position's settings and, per domain, the positions setting it (so a change is laid over
    without folding every operation again: :func:`_moved`)."""

    def __init__(self, by_position: dict[int, tuple[tuple[str, dict[str, int]], ...]]):
        super().__init__()
        self.by_position = by_position
        self.setters: dict[tuple[str, str], set[int]] = {}
        for position, sets in by_position.items():
            self._add(position, sets)
        self._settle(set(self.setters))

    def _add(self, position: int, sets: tuple[tuple[str, dict[str, int]], ...]) -> None:
        for framework, clocks in sets:
            for clock in clocks:
                self.setters.setdefault((framework, clock), set()).add(position)

    def _settle(self, domains: set[tuple[str, str]]) -> None:
        """The value of each (framework, clock) in ``domains``: the last position's that sets it."""
        for framework, clock in domains:
            setters = self.setters.get((framework, clock))
            if not setters:
                self.get(framework, {}).pop(clock, None)
                if framework in self and not self[framework]:
                    del self[framework]
                continue
            last = dict(self.by_position[max(setters)])[framework][clock]
            self[framework] = {**self.get(framework, {}), clock: last}


def _moved(value: Requests, plan: Plan, target: Target, changed: set[tuple[Any, ...]]) -> Requests | None:
    """``value`` for ``plan`` given what changed (``obligations.views.writes``): only the operations that
    changed are asked again, and only the domains they set or set now are settled again. An operation removed
    or inserted (``shift``) that sets no clock leaves every setting as it was (the order of the others holds);
    otherwise the index is rebuilt."""
    shift = next((w for w in changed if w[0] == "shift"), None)
    if shift is not None:
        _, at, step = shift
        moved = value.by_position.get(at, ()) if step < 0 else ()
        if step > 0 and spec(plan.operations[at].op).clocks is not None:
            moved = _set_by(target, plan.operations[at])
        return None if any(clocks for _, clocks in moved) else value
    positions = {w[1] for w in changed if w[0] == "o" and isinstance(w[1], int)}
    fresh = Requests({})
    fresh.by_position = dict(value.by_position)
    fresh.setters = {k: set(v) for k, v in value.setters.items()}
    dict.update(fresh, {framework: dict(clocks) for framework, clocks in value.items()})
    touched: set[tuple[str, str]] = set()
    for position in positions:
        for framework, clocks in fresh.by_position.pop(position, ()):
            for clock in clocks:
                fresh.setters[(framework, clock)].discard(position)
                touched.add((framework, clock))
        if position < len(plan.operations) and spec(plan.operations[position].op).clocks is not None:
            sets = _set_by(target, plan.operations[position])
            fresh.by_position[position] = sets
            fresh._add(position, sets)
            touched |= {(framework, clock) for framework, clocks in sets for clock in clocks}
    fresh._settle(touched)
    return fresh


@keyed(update=_moved)
def clock_requests(plan: Plan, target: Target) -> Requests:
    """Framework → the clock domains the plan's operations set under it (read per framework, so a rule
    depends on the clocks, not on every operation: ``plan.derived``)."""
    return Requests(
        {i: _set_by(target, op) for i, op in enumerate(plan.operations) if spec(op.op).clocks is not None}
    )


@shared
def _set_by(target: Target, op: Operation) -> tuple[tuple[str, dict[str, int]], ...]:
    """What one clock-setting operation sets, per framework realizing it."""
    setting = spec(op.op)
    assert setting.clocks is not None
    return tuple(
        (framework, dict(setting.clocks(op, target, framework)))
        for framework in target.frameworks
        if setting.realization(framework) is not None
    )
