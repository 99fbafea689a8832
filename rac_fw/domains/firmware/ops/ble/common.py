"""What every Bluetooth LE operation shares: the radio it needs and the connections the host must hold.

One host serves every BLE operation of a plan, so the connection count the host is configured for is
the sum of what the peripheral side (``ble_advertise``) accepts and what the central side
(``ble_scan`` with ``connect``) opens; both realizations set it from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.radio import ble, ble_stack
from rac_fw.domains.firmware.plan.evidence import relax, remove, violation

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.model import Plan


def label(op: Any, index: int) -> str:
    """How evidence names an operation: its plan name, else its position."""
    return op.name or f"operations[{index}]"


def no_radio(target: Target, index: int, op: Any) -> list[Evidence]:
    """BLE on a chip without a Bluetooth LE radio: E_TARGET_UNSUPPORTED naming the targets that have one."""
    if ble(target) is not None:
        return []
    others = [t for t in target_ids() if ble(load_target(t)) is not None]
    return [
        violation(
            "E_TARGET_UNSUPPORTED",
            f"{target.id} has no Bluetooth LE radio (targets with one: {', '.join(others) or 'none'})",
            ["operations", index],
            [target.id, *others],
            relaxations=[relax(f"drop this {op.op}", remove(["operations", index]))],
        )
    ]


def has_host(framework: str) -> Any:
    """An ``available`` test: the chip's radio has a Bluetooth host for ``framework``."""

    def test(target: Target) -> bool:
        return ble_stack(target, framework) is not None

    return test


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
