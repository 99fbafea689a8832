"""The ``flash_store`` operation: erase, program and read back a range of the storage area.

Obligations (this module): the storage area exists (Zephyr: the board's ``storage_partition``; bare
metal and STM32 HAL: the flash's last erase block) and holds the range (E_PARTITION_MISSING, E_PARTITION_TOO_SMALL);
offset and length are multiples of the flash write block (E_WRITE_ALIGNMENT); and no key-value record
lives in the same partition, whose erase would destroy it (E_PARTITION_SHARED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import has_registers
from rac_fw.domains.firmware.facts.storage import Partition, Storage, storage
from rac_fw.domains.firmware.ops.storage.area import (
    TOO_SMALL,
    aligned,
    area,
    has_partition,
    missing,
    zephyr_flash_writer,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

SHARED = "E_PARTITION_SHARED"
#: Operations that keep an NVS file system in the storage partition (a raw erase there destroys it).
FILE_SYSTEM_USERS = ("kv_record", "settings_value")
#: STM32 flash interface (RM0090 §3.5.1 / §3.9.1): the KEYR unlock sequence.
STM32_FLASH_KEYS = (0x45670123, 0xCDEF89AB)
#: nRF52 NVMC CONFIG.WEN values (nRF52840 PS v1.7 §4.3.9.2): read-only, write enabled, erase enabled.
NVMC_WEN = {"read": 0, "write": 1, "erase": 2}
#: nRF52840 PS §4.3 Table 8 (tERASEPAGE 85 ms max, tWRITE 41 us max per word): bounds with margin.
NVMC_ERASE_US, NVMC_WRITE_US = 200_000, 1000
#: STM32Cube HAL ``HAL_FLASH_Program`` program type by the flash's program unit (``write_block_bytes``):
#: a byte passed by value (F4 ``FLASH_TYPEPROGRAM_BYTE``) or a 256-bit flash word read from a buffer
#: address (H7 ``FLASH_TYPEPROGRAM_FLASHWORD``, stm32h7xx_hal_flash.h) — the unit is the fact, the
#: macro the HAL's name for it.
HAL_PROGRAM = {1: ("FLASH_TYPEPROGRAM_BYTE", False), 32: ("FLASH_TYPEPROGRAM_FLASHWORD", True)}


class FlashStore(Operation):
    """Erase the blocks holding ``[offset_bytes, offset_bytes + length_bytes)`` of the storage area,
    program a known pattern there and read it back.

    Zephyr: the board's ``storage_partition`` through the flash map. Bare metal (STM32 flash
    interface, nRF52 NVMC) and STM32 HAL (``HAL_FLASHEx_Erase`` / ``HAL_FLASH_Program``): the flash's
    last erase block, which the image never reaches. Every byte of the erased
    blocks outside the range is lost too (flash erases whole blocks).
    """

    op: Literal["flash_store"]
    offset_bytes: int = Field(default=0, ge=0, le=1 << 24, description="Offset inside the storage area.")
    length_bytes: int = Field(ge=1, le=65536, description="Bytes to program and read back.")


def _area(plan: Any, target: Target, framework: str) -> Partition | None:
    """Zephyr: the storage partition; bare metal: the flash's last erase block (offset from flash start)."""
    if framework in ("baremetal", "hal"):
        facts = storage(target)
        if facts is None or not facts.flash.erase_blocks:
            return None
        last = facts.flash.erase_blocks[-1].size
        return Partition("last_erase_block", facts.flash.size - last, last, "flash")
    return area(plan, target, framework, "storage")


def _exists(plan: Plan, target: Target, framework: str, index: int, op: FlashStore) -> list[Evidence]:
    if framework in ("baremetal", "hal"):
        return []
    return missing(plan, target, framework, index, "storage", "flash_store")


def _fits(plan: Plan, target: Target, framework: str, index: int, op: FlashStore) -> list[Evidence]:

    part = _area(plan, target, framework)
    end = op.offset_bytes + op.length_bytes
    if part is None or end <= part.size:
        return []
    options = []
    if op.length_bytes <= part.size:
        options.append(relax("start at offset 0", replace(["operations", index, "offset_bytes"], 0)))
    room = part.size - op.offset_bytes
    if room > 0:
        options.append(relax(f"store {room} bytes", replace(["operations", index, "length_bytes"], min(room, 65536))))
    return [
        violation(
            TOO_SMALL,
            f"flash_store: bytes {op.offset_bytes}..{end} do not fit {part.name} ({part.size} bytes) on {target.id}",
            ["operations", index, "length_bytes"],
            [part.name, target.id],
            [measure("end", end, "bytes"), measure("area", part.size, "bytes")],
            options,
        )
    ]


def _alignment(plan: Plan, target: Target, framework: str, index: int, op: FlashStore) -> list[Evidence]:
    facts = storage(target)
    if facts is None:
        return []
    unit = facts.flash.write_unit(framework)
    where = f"flash_store on {target.id}"
    return aligned(index, "offset_bytes", op.offset_bytes, unit, where, ["offset_bytes", target.id]) + aligned(
        index, "length_bytes", op.length_bytes, unit, where, ["length_bytes", target.id]
    )


def _shared(plan: Plan, target: Target, framework: str, index: int, op: FlashStore) -> list[Evidence]:

    if framework in ("baremetal", "hal"):
        return []
    records = [i for i, other in enumerate(plan.operations) if other.op in FILE_SYSTEM_USERS]
    part = _area(plan, target, framework)
    if not records or part is None:
        return []
    return [
        violation(
            SHARED,
            f"flash_store erases blocks of {part.name}, where the {plan.operations[records[0]].op} at "
            f"operations[{records[0]}] keeps its file system: the erase would destroy its records",
            ["operations", index],
            [part.name, "flash_store", plan.operations[records[0]].op],
            relaxations=[relax("drop this flash_store", remove(["operations", index]))],
        )
    ]


def _erase_range(target: Target, part: Partition, op: FlashStore) -> tuple[int, int]:
    """``(offset, length)`` inside the area covering every erase block the range touches."""
    facts = storage(target)
    assert facts is not None
    blocks = facts.flash.blocks_in(part.offset + op.offset_bytes, op.length_bytes)
    start = blocks[0][0]
    end = blocks[-1][0] + blocks[-1][1]
    return start - part.offset, end - start


def _zephyr(b: ZephyrBuilder, index: int, op: FlashStore) -> dict[str, Any]:
    part = _area(b.plan, b.target, "zephyr")
    if part is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id} has no storage_partition", ["flash_store"], [])
    b.app.includes.update({"zephyr/storage/flash_map.h", "string.h"})
    zephyr_flash_writer(b, "storage")
    erase_off, erase_len = _erase_range(b.target, part, op)
    return {
        "id": b.ids[index],
        "offset": op.offset_bytes,
        "bytes": op.length_bytes,
        "erase_offset": erase_off,
        "erase_bytes": erase_len,
        "step": {"period_ms": None},
        "setup": False,
    }


def _stm32_flash(target: Target) -> bool:
    """The STM32 flash interface the bare-metal template programs (KEYR unlock, CR sector erase, SR flags)."""
    return storage(target) is not None and has_registers(target, "FLASH", "KEYR", "CR", "SR", "ACR")


def _nvmc(target: Target) -> bool:
    """The nRF52 NVMC: CONFIG write/erase enable, ERASEPAGE by address, READY (nRF52840 PS §4.3)."""
    return storage(target) is not None and has_registers(target, "NVMC", "CONFIG", "ERASEPAGE", "READY")


def _hal_flash(target: Target) -> bool:
    """A flash whose program unit the HAL programs (``HAL_PROGRAM``) behind the chip's flash interface."""
    facts = storage(target)
    return facts is not None and facts.flash.write_block_bytes in HAL_PROGRAM and "FLASH" in target.peripherals


def _baremetal_flash(target: Target) -> bool:
    return _stm32_flash(target) or _nvmc(target)


def _last_block(plan: Any, target: Target, framework: str) -> tuple[Storage, Partition, int] | None:
    """The storage facts, the last erase block and its address (bare metal and HAL share the area)."""
    facts = storage(target)
    part = _area(plan, target, framework)
    region = target.region(facts.flash.region) if facts is not None else None
    if facts is None or part is None or region is None:
        return None
    return facts, part, region.address + part.offset


def _baremetal(b: BaremetalBuild, index: int, op: FlashStore) -> None:
    found = _last_block(b.plan, b.target, "baremetal")
    if found is None:
        raise b.error(f"{b.target.id}: no flash geometry (or its memory region) in the facts")
    facts, part, block_address = found
    ctx = b.base(index, op) | {
        "address": block_address + op.offset_bytes,
        "block_address": block_address,
        "block_bytes": part.size,
        "bytes": op.length_bytes,
        "erased": facts.flash.erased_value,
    }
    if _nvmc(b.target):
        regs = b.regs("NVMC")
        ctx |= {"m": regs.m, "wen": NVMC_WEN, "word": facts.flash.write_block_bytes,
                "erase_budget": b.budget_us(NVMC_ERASE_US), "program_budget": b.budget_us(NVMC_WRITE_US)}  # fmt: skip
        b.emit("ops/flash_store_nvmc", ctx)
        return
    regs = b.regs("FLASH")
    ctx |= {
        "m": regs.m,
        "p": regs.p,
        "sector": sum(run.count for run in facts.flash.erase_blocks) - 1,
        "flash_keys": STM32_FLASH_KEYS,
        # RM0090 Table 45: a 128 KB sector erases in up to 2 s (x8 parallelism: 4 s); allow 8 s.
        "erase_budget": b.budget_us(8_000_000),
        "program_budget": b.budget_us(1000),
    }
    b.emit("ops/flash_store", ctx)


def _hal(b: HalBuild, index: int, op: FlashStore) -> dict[str, Any]:
    """``HAL_FLASHEx_Erase`` of the last sector (bank and sector number from the geometry facts: sectors
    per bank = sectors / banks), ``HAL_FLASH_Program`` in program units, read-back compare."""
    found = _last_block(b.plan, b.target, "hal")
    unit = found[0].flash.write_block_bytes if found else 0
    if found is None or unit not in HAL_PROGRAM:
        raise b.unsupported(f"operations.{index}", f"{b.target.id}: no flash geometry with a HAL program type")
    facts, part, block_address = found
    sectors = sum(run.count for run in facts.flash.erase_blocks)
    per_bank = sectors // facts.flash.banks
    program, by_address = HAL_PROGRAM[unit]
    view = b.base_view(index, op)
    view.update(
        block_address=block_address, block_bytes=part.size, address=block_address + op.offset_bytes,
        bytes=op.length_bytes, bank=(sectors - 1) // per_bank + 1, sector=(sectors - 1) % per_bank,
        unit=unit, program=program, by_address=by_address, erased=facts.flash.erased_value,
        invalidate=b.cache_on,
    )  # fmt: skip
    return view


SPEC = OpSpec(
    model=FlashStore,
    family="storage",
    realizations={
        "zephyr": Realization(template="storage", view=_zephyr, available=has_partition("zephyr", "storage")),
        "baremetal": Realization(template="ops/flash_store", view=_baremetal, available=_baremetal_flash),
        "hal": Realization(template="storage", view=_hal, available=_hal_flash),
    },
    checks=(_exists, _fits, _alignment, _shared),
    codes=("E_PARTITION_MISSING", TOO_SMALL, "E_WRITE_ALIGNMENT", SHARED),
)
