"""The ``image_stream`` operation: stream an image into the secondary slot in chunks, then request the upgrade.

Obligations (this module): a bootloader block exists (E_BOOTLOADER_MISSING); the secondary slot exists
(E_PARTITION_MISSING) and holds the image beside the bootloader's trailer (E_IMAGE_TOO_LARGE); and each
chunk is a multiple of the flash write block (E_WRITE_ALIGNMENT), since the image writer programs whole
chunks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import Partition, storage
from rac_fw.domains.firmware.ops.storage.area import aligned, area, missing, zephyr_flash_writer
from rac_fw.domains.firmware.ops.update.boot import MISSING, has_slots, needs_bootloader
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

TOO_LARGE = "E_IMAGE_TOO_LARGE"


class ImageStream(Operation):
    """Copy the running image (``image_bytes`` of it) into the secondary slot ``chunk_bytes`` at a time,
    reporting progress, then request a ``test`` upgrade (the bootloader boots it once; it must confirm
    itself) or a ``permanent`` one.

    The source is the running slot, so the streamed image is a valid, signed image: a real update path
    with a known-good payload. Zephyr: ``boot_erase_img_bank`` then ``flash_img_buffered_write`` into
    slot1 and ``boot_request_upgrade``. ESP-IDF: ``esp_ota_begin``/``esp_ota_write``/``esp_ota_end`` into
    the next OTA partition and ``esp_ota_set_boot_partition``.
    """

    op: Literal["image_stream"]
    image_bytes: int = Field(ge=1, le=1 << 24, description="Bytes of the image to stream.")
    chunk_bytes: int = Field(default=512, ge=16, le=4096, description="Bytes written per chunk.")
    upgrade: Literal["test", "permanent"] = "test"


def _slot(plan: Any, target: Target, framework: str) -> Partition | None:
    return area(plan, target, framework, "slot1")


def usable_bytes(plan: Any, target: Target, framework: str, slot: Partition) -> int:
    """Image bytes the slot holds: MCUboot keeps its trailer (swap status, magic) in the slot's last erase
    block; ESP-IDF's OTA partitions hold the whole image."""
    facts = storage(target)
    if framework != "zephyr" or facts is None:
        return slot.size
    blocks = facts.flash.blocks_in(slot.offset, slot.size)
    return slot.size - blocks[-1][1]


def _bootloader(plan: Plan, target: Target, framework: str, index: int, op: ImageStream) -> list[Evidence]:
    return needs_bootloader(plan, target, framework, index, "image_stream")


def _secondary(plan: Plan, target: Target, framework: str, index: int, op: ImageStream) -> list[Evidence]:
    if plan.bootloader is None:
        return []
    return missing(plan, target, framework, index, "slot1", "image_stream")


def _size(plan: Plan, target: Target, framework: str, index: int, op: ImageStream) -> list[Evidence]:

    slot = _slot(plan, target, framework)
    if slot is None:
        return []
    room = usable_bytes(plan, target, framework, slot)
    if op.image_bytes <= room:
        return []
    path: list[str | int] = ["operations", index, "image_bytes"]
    return [
        violation(
            TOO_LARGE,
            f"image_stream: an image of {op.image_bytes} bytes does not fit {slot.name} ({slot.size} bytes, "
            f"{room} for the image beside the bootloader trailer) on {target.id}",
            path,
            [slot.name, target.id],
            [
                measure("image", op.image_bytes, "bytes"),
                measure("slot", slot.size, "bytes"),
                measure("usable", room, "bytes"),
                measure("excess", op.image_bytes - room, "bytes"),
            ],  # fmt: skip
            [relax(f"stream at most {room} bytes", replace(path, room))],
        )
    ]


def _chunk(plan: Plan, target: Target, framework: str, index: int, op: ImageStream) -> list[Evidence]:
    facts = storage(target)
    if facts is None:
        return []
    unit = facts.flash.write_unit(framework)
    return aligned(
        index, "chunk_bytes", op.chunk_bytes, unit, f"image_stream on {target.id}", ["chunk_bytes", target.id]
    )


def _zephyr(b: ZephyrBuilder, index: int, op: ImageStream) -> dict[str, Any]:
    b.app.includes.update({"zephyr/dfu/mcuboot.h", "zephyr/dfu/flash_img.h", "zephyr/storage/flash_map.h"})
    zephyr_flash_writer(b, "update")
    b.app.need("update", "CONFIG_STREAM_FLASH", "CONFIG_IMG_MANAGER", "CONFIG_MCUBOOT_IMG_MANAGER")
    b.app.setting("update", "CONFIG_IMG_BLOCK_BUF_SIZE", str(op.chunk_bytes))
    return {
        "id": b.ids[index],
        "bytes": op.image_bytes,
        "chunk": op.chunk_bytes,
        "mode": "BOOT_UPGRADE_PERMANENT" if op.upgrade == "permanent" else "BOOT_UPGRADE_TEST",
        "step": {"period_ms": None},
    }


def _espidf(b: EspIdfBuild, index: int, op: ImageStream) -> dict[str, Any]:
    b.requires.update({"app_update", "esp_partition"})
    return {"bytes": op.image_bytes, "chunk": op.chunk_bytes}


SPEC = OpSpec(
    model=ImageStream,
    family="update",
    realizations={
        "zephyr": Realization(template="update", view=_zephyr, available=has_slots("zephyr")),
        "espidf": Realization(template="update", view=_espidf, available=has_slots("espidf")),
    },
    checks=(_bootloader, _secondary, _size, _chunk),
    codes=(MISSING, "E_PARTITION_MISSING", TOO_LARGE, "E_WRITE_ALIGNMENT"),
)
