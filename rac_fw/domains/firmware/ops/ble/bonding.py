"""Bonding: pairing keys kept across resets, in the settings backend (Zephyr) or NVS (NimBLE).

A bond is host-wide (one key store for every link), so the first BLE operation that asks for it
configures the store, and its setup loads the keys once. The store lives in the board's storage
partition (``facts/storage.py``: Zephyr ``storage_partition``, ESP-IDF ``nvs``): without one the keys
would vanish at reset, which is not bonding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import role, storage
from rac_fw.domains.firmware.ops.ble.common import label
from rac_fw.domains.firmware.plan.evidence import relax, replace, violation

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

BLE_OPS = ("ble_advertise", "ble_scan")


def bonds(plan: Plan) -> bool:
    """Whether any BLE operation of the plan keeps bonds."""
    return any(getattr(o, "bond", False) for o in plan.operations if o.op in BLE_OPS)


def bonding_setup(plan: Plan, index: int) -> bool:
    """Whether operation ``index`` is the one whose setup loads the stored keys (the first BLE one)."""
    first = next((i for i, o in enumerate(plan.operations) if o.op in BLE_OPS), None)
    return bonds(plan) and first == index


def _partition(target: Target, framework: str) -> str | None:
    """The partition that would hold the keys, or None when the board has none for ``framework``."""
    facts = storage(target)
    found = role(facts, framework, "storage") if facts is not None else None
    return found.name if found is not None else None


def bond_check(target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_TARGET_UNSUPPORTED: bonding where the flash map has no storage partition to keep the keys in."""
    if not op.bond or _partition(target, framework) is not None:
        return []
    wanted = "nvs" if framework == "espidf" else "storage_partition"
    return [
        violation(
            "E_TARGET_UNSUPPORTED",
            f"{label(op, index)}: bonds are kept in the {wanted} partition, which {target.id}'s {framework} flash "
            "map does not have (keys would be lost at reset)",
            ["operations", index, "bond"],
            [label(op, index), wanted, target.id],
            relaxations=[relax("pair without bonding", replace(["operations", index, "bond"], False))],
        )
    ]


def zephyr_bonding(b: ZephyrBuilder, index: int) -> bool:
    """Configure the settings backend for the Bluetooth host's keys; True when this op loads them."""
    if not bonds(b.plan):
        return False
    b.app.need("ble", "CONFIG_BT_SMP", "CONFIG_BT_BONDABLE", "CONFIG_BT_SETTINGS", "CONFIG_SETTINGS", "CONFIG_FLASH",
               "CONFIG_FLASH_MAP", "CONFIG_NVS", "CONFIG_SETTINGS_NVS")  # fmt: skip
    b.app.includes.add("zephyr/settings/settings.h")
    return bonding_setup(b.plan, index)


def espidf_bonding(b: EspIdfBuild) -> bool:
    """Persist NimBLE's key store in NVS; True when the plan bonds."""
    if not bonds(b.plan):
        return False
    b.sdkconfig["CONFIG_BT_NIMBLE_NVS_PERSIST"] = "y"
    return True
