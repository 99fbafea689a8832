"""What every Bluetooth LE operation shares: the radio it needs and the connections the host must hold.

One host serves every BLE operation of a plan, so the connection count the host is configured for is
the sum of what the peripheral side (``ble_advertise``) accepts and what the central side
(``ble_scan`` with ``connect``) opens; both realizations set it from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.radio import ble, ble_stack

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.model import Plan


def label(op: Any, index: int) -> str:
    """How evidence names an operation: its plan name, else its position."""
    return op.name or f"operations[{index}]"


def has_host(framework: str) -> Any:
    """An ``available`` test: the chip's radio has a Bluetooth host for ``framework``."""

    def test(target: Target) -> bool:
        return ble_stack(target, framework) is not None

    return test


def why_no_host(framework: str) -> Any:
    """The ``why_unavailable`` matching :func:`has_host` (the support rule names where BLE is realized)."""

    def why(target: Target) -> str:
        if ble(target) is None:
            return f"{target.id} has no Bluetooth LE radio"
        return f"the {target.id} radio has no Bluetooth host for {framework}"

    return why


def _is(op: Any, kind: str, flag: str) -> bool:
    return bool(op.op == kind and getattr(op, flag, False))


def peripheral_links(plan: Plan) -> int:
    """Connections the plan's advertiser accepts (0: none, or it is not connectable)."""
    return sum(getattr(o, "max_connections", 0) for o in plan.operations if _is(o, "ble_advertise", "connectable"))


def central_links(plan: Plan) -> int:
    """Connections the plan's scanners open to the peripherals they match."""
    return sum(getattr(o, "max_connections", 0) for o in plan.operations if _is(o, "ble_scan", "connect"))


def host_links(plan: Plan) -> int:
    """The connection count the host is configured for (at least 1, the Kconfig minimum)."""
    return max(1, peripheral_links(plan) + central_links(plan))
