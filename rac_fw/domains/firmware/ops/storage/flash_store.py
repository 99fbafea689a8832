"""The ``flash_store`` operation: erase, program and read back a range of the storage area.

Obligations (this module): the storage area exists (Zephyr: the board's ``storage_partition``; bare
metal: the flash's last erase block) and holds the range (E_PARTITION_MISSING, E_PARTITION_TOO_SMALL);
offset and length are multiples of the flash write block (E_WRITE_ALIGNMENT); and no key-value record
lives in the same partition, whose erase would destroy it (E_PARTITION_SHARED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import has_registers
from rac_fw.domains.firmware.facts.storage import Partition, storage
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
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

SHARED = "E_PARTITION_SHARED"
#: Operations that keep an NVS file system in the storage partition (a raw erase there destroys it).
FILE_SYSTEM_USERS = ("kv_record", "settings_value")
#: STM32 flash interface (RM0090 §3.5.1 / §3.9.1): the KEYR unlock sequence.
STM32_FLASH_KEYS = (0x45670123, 0xCDEF89AB)


class FlashStore(Operation):
    """Erase the blocks holding ``[offset_bytes, offset_bytes + length_bytes)`` of the storage area,
    program a known pattern there and read it back.

    Zephyr: the board's ``storage_partition`` through the flash map. Bare metal (STM32 flash
    interface): the flash's last erase block, which the image never reaches. Every byte of the erased
    blocks outside the range is lost too (flash erases whole blocks).
    """

    op: Literal["flash_store"]
    offset_bytes: int = Field(default=0, ge=0, le=1 << 24, description="Offset inside the storage area.")
    length_bytes: int = Field(ge=1, le=65536, description="Bytes to program and read back.")


def _area(plan: Any, target: Target, framework: str) -> Partition | None:
    """Zephyr: the storage partition; bare metal: the flash's last erase block (offset from flash start)."""
    if framework == "baremetal":
        facts = storage(target)
        if facts is None or not facts.flash.erase_blocks:
            return None
        last = facts.flash.erase_blocks[-1].size
        return Partition("last_erase_block", facts.flash.size - last, last, "flash")
    return area(plan, target, framework, "storage")


def _exists(plan: Plan, target: Target, framework: str, index: int, op: FlashStore) -> list[Evidence]:
    if framework == "baremetal":
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

    if framework == "baremetal":
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


def _baremetal(b: BaremetalBuild, index: int, op: FlashStore) -> None:
    facts = storage(b.target)
    part = _area(b.plan, b.target, "baremetal")
    if facts is None or part is None:
        raise b.error(f"{b.target.id}: no flash geometry in the facts")
    region = b.target.region(facts.flash.region)
    if region is None:
        raise b.error(f"{b.target.id}: no memory region {facts.flash.region}")
    regs = b.regs("FLASH")
    ctx = b.base(index, op) | {
        "m": regs.m,
        "p": regs.p,
        "sector": sum(run.count for run in facts.flash.erase_blocks) - 1,
        "address": region.address + part.offset + op.offset_bytes,
        "block_address": region.address + part.offset,
        "block_bytes": part.size,
        "bytes": op.length_bytes,
        "flash_keys": STM32_FLASH_KEYS,
        "erased": facts.flash.erased_value,
        # RM0090 Table 45: a 128 KB sector erases in up to 2 s (x8 parallelism: 4 s); allow 8 s.
        "erase_budget": b.budget_us(8_000_000),
        "program_budget": b.budget_us(1000),
    }
    b.emit("ops/flash_store", ctx)


SPEC = OpSpec(
    model=FlashStore,
    family="storage",
    realizations={
        "zephyr": Realization(template="storage", view=_zephyr, available=has_partition("zephyr", "storage")),
        "baremetal": Realization(template="ops/flash_store", view=_baremetal, available=_stm32_flash),
    },
    checks=(_exists, _fits, _alignment, _shared),
    codes=("E_PARTITION_MISSING", TOO_SMALL, "E_WRITE_ALIGNMENT", SHARED),
)
