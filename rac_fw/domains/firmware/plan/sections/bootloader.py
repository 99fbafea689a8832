"""The plan-level ``bootloader`` block: MCUboot under Zephyr (sysbuild), ESP-IDF's OTA bootloader.

Zephyr: ``sysbuild.conf`` selects MCUboot, its mode and signature type; ``sysbuild/mcuboot.conf``
configures the MCUboot image (sector count, downgrade prevention); the application's ``prj.conf``
gets the MCUboot image manager. ESP-IDF: the two-OTA partition table (``partitions.csv``, the plan's
table as ``plan/partitions`` decides it: the facts' OTA table plus any data partition an operation adds)
and app rollback in ``sdkconfig.defaults``.

Obligations: the mode is possible on the board's flash map (a swap needs a secondary slot,
swap-scratch a scratch partition: E_BOOTLOADER_MODE); the slots have the sizes the mode needs
(E_SLOT_MISMATCH); no two choices exclude each other (E_BOOTLOADER_CONFLICT); and a stated sector
limit covers a slot (E_BOOT_SECTORS). Sysbuild's symbols are those of Zephyr's
``share/sysbuild/images/bootloader/Kconfig`` (zephyrproject-rtos/zephyr 02d6d2020cb5), MCUboot's of
``boot/zephyr/Kconfig`` (mcu-tools/mcuboot 002a4ea3c2cd).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from rac_fw.contract import Evidence, Magnitude, Relaxation
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import Partition, mcuboot_modes, role, storage
from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.partitions import idf_partition_table
from rac_fw.domains.firmware.plan.paths import PathPart, format_path
from rac_fw.domains.firmware.plan.spec import SectionSpec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

Mode = Literal["swap_scratch", "swap_move", "overwrite_only", "direct_xip", "esp_ota"]

#: Sysbuild's MCUBOOT_MODE choice symbol for each mode.
SYSBUILD_MODE = {
    "swap_scratch": "SB_CONFIG_MCUBOOT_MODE_SWAP_SCRATCH",
    "swap_move": "SB_CONFIG_MCUBOOT_MODE_SWAP_USING_MOVE",
    "overwrite_only": "SB_CONFIG_MCUBOOT_MODE_OVERWRITE_ONLY",
    "direct_xip": "SB_CONFIG_MCUBOOT_MODE_DIRECT_XIP_WITH_REVERT",
}
SIGNATURE = {"ecdsa_p256": "ECDSA_P256", "ed25519": "ED25519", "rsa": "RSA", "none": "NONE"}

MODE = "E_BOOTLOADER_MODE"
SLOTS = "E_SLOT_MISMATCH"
CONFLICT = "E_BOOTLOADER_CONFLICT"
SECTORS = "E_BOOT_SECTORS"


class Bootloader(PlanModel):
    """The bootloader the application is built with and how it installs updates.

    ``mode`` is MCUboot's upgrade strategy on Zephyr — ``swap_scratch`` (swap through the scratch
    partition), ``swap_move`` (swap by moving sectors, no scratch), ``overwrite_only`` (no revert),
    ``direct_xip`` (run the newest image from its own slot, with revert) — or ``esp_ota`` for ESP-IDF's
    bootloader with two OTA app partitions. Images are signed with ``signature``; ``encryption``
    encrypts them in the secondary slot; ``downgrade_prevention`` refuses older versions.
    """

    mode: Mode
    signature: Literal["ecdsa_p256", "ed25519", "rsa", "none"] = "ecdsa_p256"
    encryption: bool = False
    downgrade_prevention: bool = False
    max_image_sectors: int | None = Field(
        default=None, ge=1, le=65535, description="MCUboot's per-slot sector limit; None = computed from the facts."
    )


def _slots(target: Target) -> tuple[Partition | None, Partition | None, Partition | None]:
    facts = storage(target)
    if facts is None:
        return None, None, None
    return role(facts, "zephyr", "slot0"), role(facts, "zephyr", "slot1"), role(facts, "zephyr", "scratch")


def _min_block(target: Target, part: Partition) -> int:
    facts = storage(target)
    assert facts is not None
    return min(size for _, size in facts.flash.blocks_in(part.offset, part.size))


def slot_sectors(target: Target) -> int | None:
    """Erase blocks in the larger image slot (what MCUboot's sector table must hold)."""
    slot0, slot1, _ = _slots(target)
    slots = [s for s in (slot0, slot1) if s is not None]
    if not slots:
        return None
    facts = storage(target)
    assert facts is not None
    return max(len(facts.flash.blocks_in(s.offset, s.size)) for s in slots)


# --- evidence ----------------------------------------------------------------------------------------------
# The shapes of ``obligations.evidence`` (violation, relax, replace, remove, measure), built here from the
# contract types: the obligations package imports the plan, which holds this block's model, so importing
# it from here would close a cycle. Repoint to the shared helpers when they move beside the plan.
def relax(description: str, *steps: dict[str, object]) -> Relaxation:
    return Relaxation(description=description, patch=list(steps))


def replace(path: list[PathPart], value: object) -> dict[str, object]:
    return {"op": "replace", "path": list(path), "value": value}


def remove(path: list[PathPart]) -> dict[str, object]:
    return {"op": "remove", "path": list(path)}


def measure(name: str, value: int, unit: str) -> Magnitude:
    return Magnitude(name=name, value=value, unit=unit)


def violation(
    code: str,
    message: str,
    path: list[PathPart],
    objects: list[str],
    magnitudes: list[Magnitude] | None = None,
    relaxations: list[Relaxation] | None = None,
) -> Evidence:
    return Evidence(
        code=code,
        message=message,
        location=format_path(path),
        objects=list(dict.fromkeys(objects)),
        magnitudes=magnitudes or [],
        relaxations=relaxations or [],
    )


# --- obligations ---------------------------------------------------------------------------------------
def _mode(plan: Plan, target: Target, framework: str, value: Bootloader) -> list[Evidence]:

    facts = storage(target)
    if facts is None:
        return []
    if framework == "espidf":
        ota = facts.idf_tables.get("ota", ())
        if value.mode == "esp_ota" and any(p.name == "ota_1" for p in ota):
            return []
        why = "ESP-IDF's bootloader installs updates through OTA app partitions (mode esp_ota)"
        fixes = [relax("use mode esp_ota", replace(["bootloader", "mode"], "esp_ota"))]
    else:
        reasons = mcuboot_modes(facts)
        why_not = reasons.get(value.mode) if value.mode != "esp_ota" else "esp_ota is ESP-IDF's bootloader"
        if why_not is None:
            return []
        why = why_not
        fixes = [relax(f"use mode {m}", replace(["bootloader", "mode"], m)) for m, r in reasons.items() if r is None]
    fixes.append(relax("drop the bootloader block", remove(["bootloader"])))
    return [
        violation(
            MODE,
            f"bootloader mode {value.mode} is not possible with {framework} on {target.id}: {why}",
            ["bootloader", "mode"],
            [value.mode, target.id],
            relaxations=fixes,
        )
    ]


def _slot_sizes(plan: Plan, target: Target, framework: str, value: Bootloader) -> list[Evidence]:
    """swap-scratch, overwrite-only and direct-xip: slot0 = slot1; swap-move: slot0 ≥ slot1 + one sector."""

    slot0, slot1, _ = _slots(target)
    if framework != "zephyr" or slot0 is None or slot1 is None or value.mode == "esp_ota":
        return []
    block = _min_block(target, slot0)
    if value.mode == "swap_move":
        ok = slot0.size >= slot1.size + block
        rule = f"swap_move needs the primary slot one {block}-byte sector larger than the secondary"
    elif value.mode == "overwrite_only":
        ok = slot1.size <= slot0.size
        rule = "overwrite_only needs a secondary slot no larger than the primary"
    else:
        ok = slot0.size == slot1.size
        rule = f"{value.mode} needs equal slots"
    if ok:
        return []
    facts = storage(target)
    modes = mcuboot_modes(facts) if facts is not None else {}
    fixes = [relax(f"use mode {m}", replace(["bootloader", "mode"], m)) for m, r in modes.items() if r is None]
    return [
        violation(
            SLOTS,
            f"{rule}: slot0_partition is {slot0.size} bytes and slot1_partition {slot1.size} bytes on {target.id}",
            ["bootloader", "mode"],
            [slot0.name, slot1.name, target.id],
            [
                measure("slot0", slot0.size, "bytes"),
                measure("slot1", slot1.size, "bytes"),
                measure("sector", block, "bytes"),
            ],  # fmt: skip
            fixes,
        )
    ]


def _conflicts(plan: Plan, target: Target, framework: str, value: Bootloader) -> list[Evidence]:
    """Choices Kconfig makes exclusive: encryption needs a signature and a swap/overwrite mode
    (SUPPORT_BOOT_ENCRYPTION); MCUboot's downgrade prevention is not built for direct-xip, which
    already boots only the newest image."""

    found = []
    if value.encryption and value.signature == "none":
        found.append(
            violation(
                CONFLICT,
                "image encryption needs signed images (its key exchange rides on the signature); signature is none",
                ["bootloader", "encryption"],
                ["encryption", "signature"],
                relaxations=[
                    relax("sign with ecdsa_p256", replace(["bootloader", "signature"], "ecdsa_p256")),
                    relax("do not encrypt", replace(["bootloader", "encryption"], False)),
                ],  # fmt: skip
            )
        )
    if value.encryption and value.mode == "direct_xip":
        found.append(
            violation(
                CONFLICT,
                "direct_xip runs images in place from either slot, so they cannot be stored encrypted",
                ["bootloader", "encryption"],
                ["encryption", "direct_xip"],
                relaxations=[relax("do not encrypt", replace(["bootloader", "encryption"], False))],
            )
        )
    if value.downgrade_prevention and value.mode in ("direct_xip", "esp_ota") and framework == "zephyr":
        found.append(
            violation(
                CONFLICT,
                "MCUboot's downgrade prevention is not built for direct_xip (MCUBOOT_DOWNGRADE_PREVENTION depends on "
                "!BOOT_DIRECT_XIP): direct-xip already boots only the newest version",
                ["bootloader", "downgrade_prevention"],
                ["downgrade_prevention", value.mode],
                relaxations=[
                    relax("drop downgrade_prevention", replace(["bootloader", "downgrade_prevention"], False))
                ],
            )
        )
    return found


def _sectors(plan: Plan, target: Target, framework: str, value: Bootloader) -> list[Evidence]:

    needed = slot_sectors(target)
    if framework != "zephyr" or value.max_image_sectors is None or needed is None or value.max_image_sectors >= needed:
        return []
    path: list[str | int] = ["bootloader", "max_image_sectors"]
    return [
        violation(
            SECTORS,
            f"MCUboot's sector table holds {value.max_image_sectors} sectors, and an image slot on {target.id} spans "
            f"{needed} erase blocks",
            path,
            ["max_image_sectors", target.id],
            [measure("max_image_sectors", value.max_image_sectors, "sectors"), measure("slot", needed, "sectors")],
            [relax(f"allow {needed} sectors", replace(path, needed)), relax("compute it from the facts", remove(path))],
        )
    ]


# --- realizations -----------------------------------------------------------------------------------------
def _zephyr(b: ZephyrBuilder, value: Bootloader) -> None:
    lines = ["SB_CONFIG_BOOTLOADER_MCUBOOT=y", f"{SYSBUILD_MODE[value.mode]}=y",
             f"SB_CONFIG_BOOT_SIGNATURE_TYPE_{SIGNATURE[value.signature]}=y"]  # fmt: skip
    if value.encryption:
        lines.append("SB_CONFIG_BOOT_ENCRYPTION=y")
    b.app.files["sysbuild.conf"] = "# Generated by rac-fw from the plan's bootloader block.\n" + "\n".join(lines) + "\n"
    sectors = value.max_image_sectors or slot_sectors(b.target) or 128
    mcuboot = ["CONFIG_BOOT_MAX_IMG_SECTORS_AUTO=n", f"CONFIG_BOOT_MAX_IMG_SECTORS={sectors}"]
    if value.downgrade_prevention:
        mcuboot.append("CONFIG_MCUBOOT_DOWNGRADE_PREVENTION=y")
    b.app.files["sysbuild/mcuboot.conf"] = "# MCUboot image configuration (rac-fw).\n" + "\n".join(mcuboot) + "\n"
    b.app.need("bootloader", "CONFIG_BOOTLOADER_MCUBOOT")
    if value.downgrade_prevention:
        b.app.need("bootloader", "CONFIG_MCUBOOT_BOOTLOADER_NO_DOWNGRADE")


def _espidf(b: EspIdfBuild, value: Bootloader) -> None:
    idf_partition_table(b)
    b.sdkconfig["CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE"] = "y"


def _espidf_available(target: Target) -> bool:
    facts = storage(target)
    return facts is not None and any(p.name == "ota_1" for p in facts.idf_tables.get("ota", ()))


SECTION = SectionSpec(
    name="bootloader",
    model=Bootloader,
    family="update",
    realizations={"zephyr": _zephyr, "espidf": _espidf},
    # Zephyr realizes the block wherever the flash facts exist: whether the board's map allows the
    # mode is the mode obligation's answer (it names the missing partition).
    available={"zephyr": lambda t: storage(t) is not None, "espidf": _espidf_available},
    checks=(_mode, _slot_sizes, _conflicts, _sectors),
    codes=(MODE, SLOTS, CONFLICT, SECTORS),
)
