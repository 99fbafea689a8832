"""The bound plan: every name a plan uses, resolved once against the target facts.

Validation (the obligations) decides whether a plan is admissible; binding then fixes what each name
means — which board LED ``led1`` is, which pin a declared output drives, which pins the plan takes —
so that every lowering renders from the same answers (none imports the obligations) and the receipt
can list them. Lowerings read a :class:`BoundPlan`;
none of them resolves a board name itself (before this, four lowerings and the obligations each had
their own rule and disagreed about ``led1`` on the nRF52840-DK).

Which fields name board items is declared by each op spec (``OpSpec.endpoints``); the rule that
resolves a name is :func:`rac_fw.domains.firmware.facts.query.board_led` / ``board_button``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rac_fw.domains.firmware.facts.model import BoardButton, BoardLed, Target
from rac_fw.domains.firmware.facts.query import Clocks, board_button, board_led
from rac_fw.domains.firmware.obligations import violations
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import section_values, spec
from rac_fw.domains.firmware.plan.spec import Endpoint


@dataclass(frozen=True)
class BoundEndpoint:
    """What a LED/output or button name of the plan is bound to."""

    name: str
    """The name as the plan spells it."""
    role: Endpoint
    pin: str
    """The chip pin (facts spelling: ``PD12``, ``P0.14``, ``GPIO2``)."""
    active_low: bool
    board_item: BoardLed | BoardButton | None = None
    """The board LED/button, or None when the plan declared the pin itself (``resources.pins``)."""

    @property
    def dt_label(self) -> str | None:
        """The board item's devicetree node label (``led1``), when it has one."""
        return self.board_item.dt_label if self.board_item is not None else None

    def describe(self) -> str:
        if self.board_item is None:
            return f"declared pin {self.name} ({self.pin})"
        label = f", devicetree {self.board_item.dt_label}" if self.board_item.dt_label else ""
        return f"board {self.role} {self.board_item.name} ({self.pin}{label})"


class UnboundName(LookupError):
    """A name the binder cannot resolve: validation should have rejected the plan first."""


@dataclass(frozen=True)
class BoundPlan:
    """A validated plan with its names resolved, for one target and framework."""

    plan: Plan
    target: Target
    framework: str
    endpoints: dict[tuple[Endpoint, str], BoundEndpoint] = field(default_factory=dict)
    """(role, plan name) → binding."""
    bindings: tuple[str, ...] = ()
    """One line per bound field, in plan order (``operations[0].led led1 → board led LED2 (P0.14…)``)."""
    pins_in_use: frozenset[str] = frozenset()
    """Every chip pin the plan itself uses: declared pins, chip selects, bound LEDs/buttons and analog
    channel pins. A lowering picking a pin the plan left open (an I2C SCL) chooses outside this set, so
    it never needs the obligations' pin claims."""

    def rebind(self, target: Target) -> BoundPlan | None:
        """The plan retargeted to ``target`` under the same framework and bound there, or None when it
        misses an obligation there (the Zephyr lowering asks which sibling boards one tree builds for)."""
        plan = self.plan.model_copy(update={"target": target.id})
        if violations(plan, target, self.framework):
            return None
        return bind(plan, target, self.framework)

    def endpoint(self, role: Endpoint, name: str) -> BoundEndpoint:
        """The binding of LED/output (``role="led"``) or button ``name``."""
        try:
            return self.endpoints[(role, name)]
        except KeyError:
            raise UnboundName(f"{role} {name!r} was not bound (is the plan validated?)") from None

    def led(self, name: str) -> BoundEndpoint:
        return self.endpoint("led", name)

    def button(self, name: str) -> BoundEndpoint:
        return self.endpoint("button", name)


def _endpoint(plan: Plan, target: Target, role: Endpoint, name: str) -> BoundEndpoint | None:
    declared = plan.pin_use(name)
    if declared is not None:
        return BoundEndpoint(name, role, declared.pin, active_low=False)
    item: BoardLed | BoardButton | None = board_led(target, name) if role == "led" else board_button(target, name)
    if item is None:
        return None
    return BoundEndpoint(name, role, item.pin, item.active_low, item)


def bind(plan: Plan, target: Target, framework: str) -> BoundPlan:
    """Resolve every endpoint name of ``plan``; names that resolve to nothing stay unbound (the
    obligations report them; a lowering asking for one gets :class:`UnboundName`)."""
    endpoints: dict[tuple[Endpoint, str], BoundEndpoint] = {}
    lines: list[str] = []
    # Operations and plan-level blocks name board items the same way: (where, value, field → role).
    owners: list[tuple[str, object, Mapping[str, Endpoint]]] = [
        (f"operations[{index}]", op, spec(op.op).endpoints) for index, op in enumerate(plan.operations)
    ]
    owners += [(section.name, value, section.endpoints) for section, value in section_values(plan)]
    for where, value, roles in owners:
        for field_name, role in roles.items():
            name = getattr(value, field_name, None)
            if not isinstance(name, str):
                continue
            bound = endpoints.get((role, name)) or _endpoint(plan, target, role, name)
            if bound is None:
                continue
            endpoints[(role, name)] = bound
            lines.append(f"{where}.{field_name} {name} → {bound.describe()}")
    return BoundPlan(plan, target, framework, endpoints, tuple(lines), _pins_in_use(plan, endpoints))


def _pins_in_use(plan: Plan, endpoints: dict[tuple[Endpoint, str], BoundEndpoint]) -> frozenset[str]:
    """The pins of ``BoundPlan.pins_in_use``: what the plan declares and what its endpoints bind to."""
    pins = {use.pin for use in plan.resources.pins}
    pins |= {d.chip_select for d in plan.resources.devices if d.chip_select}
    pins |= {bound.pin for bound in endpoints.values()}
    for op in plan.operations:
        single = getattr(op, "channel", None)
        for channel in getattr(op, "channels", None) or ([single] if single is not None else []):
            pin = getattr(channel, "pin", None)
            if isinstance(pin, str):
                pins.add(pin)
    return frozenset(pins)


class BoundBuild:
    """What every framework's builder starts from: the bound plan, with its plan and target at hand.

    The builders (Zephyr, ESP-IDF, HAL, bare metal) are dataclasses with a ``bound`` field; view functions
    in the op specs read ``b.plan`` and ``b.target`` through these properties.
    """

    bound: BoundPlan

    @property
    def plan(self) -> Plan:
        return self.bound.plan

    @property
    def target(self) -> Target:
        return self.bound.target

    @property
    def clocks(self) -> Clocks:
        """The clocks the plan runs (``plan.clocks.plan_clocks``): a lowering computing a divisor asks this, the
        same view the obligations judged the plan with."""
        return plan_clocks(self.plan, self.target, self.bound.framework)
