"""What the update operations share: the bootloader block they need, and the slot an image goes to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import mcuboot_modes, role, storage
from rac_fw.domains.firmware.plan.evidence import add, relax, remove, violation

MISSING = "E_BOOTLOADER_MISSING"


def possible_modes(target: Target, framework: str) -> list[str]:
    """Bootloader modes the board's flash map allows under ``framework`` (facts.storage decides)."""
    facts = storage(target)
    if facts is None:
        return []
    if framework == "espidf":
        return ["esp_ota"] if any(p.name == "ota_1" for p in facts.idf_tables.get("ota", ())) else []
    return [m for m, why in mcuboot_modes(facts).items() if why is None]


def has_slots(framework: str) -> Callable[[Target], bool]:
    """Availability: ``framework``'s flash map of the board (ESP-IDF: its OTA table) has a secondary slot."""

    def available(target: Target) -> bool:
        facts = storage(target)
        return facts is not None and role(facts, framework, "slot1", ota=True) is not None

    return available


def needs_bootloader(plan: Any, target: Target, framework: str, index: int, what: str) -> list[Evidence]:
    """E_BOOTLOADER_MISSING when the plan has no ``bootloader`` block (an image needs one to be swapped,
    confirmed or rolled back); the relaxations add one in each mode the board allows."""

    if plan.bootloader is not None:
        return []
    modes = possible_modes(target, framework)
    options = [relax(f"add a bootloader block (mode {m})", add(["bootloader"], {"mode": m})) for m in modes]
    options.append(relax(f"drop this {what}", remove(["operations", index])))
    return [
        violation(
            MISSING,
            f"{what} needs a bootloader that swaps and confirms images: the plan has no bootloader block"
            + ("" if modes else f" and the {framework} flash map of {target.id} allows no bootloader mode"),
            ["operations", index],
            [what, target.id],
            relaxations=options,
        )
    ]
