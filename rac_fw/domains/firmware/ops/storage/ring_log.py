"""The ``ring_log`` operation: a persistent ring of fixed-size records in the storage partition (Zephyr's
Flash Circular Buffer), kept across reboots: at boot the records that survived are counted and the
newest is read, then one record is appended (the oldest sector erased when the ring is full).

Obligations (this module): the storage partition exists and is made of equal erase blocks, at most 255
of them (FCB's ``uint8_t f_sector_cnt``; E_PARTITION_MISSING, E_SECTOR_SIZE); a record fits FCB's length
limit and a sector beside the sector header (E_RECORD_TOO_LARGE); and the append rate over the
device's lifetime stays within the erase cycles the ring's sectors survive (E_FLASH_ENDURANCE:
appends/day × lifetime ≤ endurance × sectors × records per sector).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import storage
from rac_fw.domains.firmware.ops.storage.area import (
    area,
    has_partition,
    missing,
    uniform_blocks,
    zephyr_flash_writer,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import UNUSED, measure, relax, remove, replace, unused_field, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

SECTOR = "E_SECTOR_SIZE"
RECORD = "E_RECORD_TOO_LARGE"
ENDURANCE = "E_FLASH_ENDURANCE"
#: include/zephyr/fs/fcb.h: FCB_MAX_LEN; ``f_sector_cnt`` is a uint8_t.
FCB_MAX_LEN = 0x3FFF
FCB_MAX_SECTORS = 255
#: subsys/fs/fcb: a sector starts with a disk header (magic, version, id: 8 bytes, aligned to the write
#: unit); an entry is its 1- or 2-byte length then the data (aligned), then a 1-byte CRC (aligned).
FCB_SECTOR_HEADER = 8
#: The FCB magic of rac-fw rings ("RAC1"): a sector whose header lacks it is taken as empty.
FCB_MAGIC = 0x52414331
DAY_MS = 86_400_000


class RingLog(Operation):
    """Keep ``record_bytes``-byte records in a ring on the storage partition that survives reboots; at
    boot count what survived, read the newest, append one; with ``append_period_ms`` append again
    every period (the endurance budget over ``lifetime_years`` judges the rate)."""

    op: Literal["ring_log"]
    record_bytes: int = Field(ge=1, le=16383, description="Bytes per record (FCB_MAX_LEN is 16383).")
    append_period_ms: int | None = Field(default=None, ge=1, le=31_536_000_000)
    lifetime_years: float = Field(default=10.0, gt=0, le=50)


def _unit(target: Target) -> int:
    facts = storage(target)
    return facts.flash.write_unit("zephyr") if facts else 1


def _entry_bytes(op: RingLog, target: Target) -> int:
    unit = _unit(target)
    length = 1 if op.record_bytes < 0x80 else 2
    return -(-(length + op.record_bytes) // unit) * unit + unit


def _exists(plan: Plan, target: Target, framework: str, index: int, op: RingLog) -> list[Evidence]:
    return missing(plan, target, framework, index, "storage", "ring_log")


def _sectors(plan: Plan, target: Target, framework: str, index: int, op: RingLog) -> list[Evidence]:
    part = area(plan, target, framework, "storage")
    if framework != "zephyr" or part is None:
        return []
    geometry = uniform_blocks(plan, target, "zephyr", "storage")
    if geometry is not None and geometry[1] <= FCB_MAX_SECTORS:
        return [] if geometry[1] >= 2 else [violation(
            SECTOR, f"ring_log: {part.name} is one sector; a ring needs two (one is erased while the other holds "
            "the records)", ["operations", index], [part.name, target.id],
            [measure("sectors", geometry[1], "count")], [relax("drop this ring_log", remove(["operations", index]))],
        )]  # fmt: skip
    why = "mixes erase block sizes" if geometry is None else f"has {geometry[1]} sectors, above FCB's {FCB_MAX_SECTORS}"
    return [violation(
        SECTOR, f"ring_log: {part.name} {why}", ["operations", index], [part.name, target.id],
        relaxations=[relax("drop this ring_log", remove(["operations", index]))],
    )]  # fmt: skip


def _record(plan: Plan, target: Target, framework: str, index: int, op: RingLog) -> list[Evidence]:
    geometry = uniform_blocks(plan, target, "zephyr", "storage")
    if framework != "zephyr" or geometry is None:
        return []
    room = geometry[0] - FCB_SECTOR_HEADER
    if _entry_bytes(op, target) <= room:
        return []
    unit = _unit(target)
    fit = min(FCB_MAX_LEN, (room - unit) // unit * unit - 2)
    path: list[str | int] = ["operations", index, "record_bytes"]
    return [violation(
        RECORD, f"ring_log: a {op.record_bytes}-byte record takes {_entry_bytes(op, target)} bytes with its length "
        f"and CRC; a {geometry[0]}-byte sector holds {room} after its header", path, ["record_bytes", target.id],
        [measure("entry", _entry_bytes(op, target), "bytes"), measure("sector_room", room, "bytes")],
        [relax(f"store {fit}-byte records", replace(path, fit))] if fit > 0 else [],
    )]  # fmt: skip


def _endurance(plan: Plan, target: Target, framework: str, index: int, op: RingLog) -> list[Evidence]:
    facts, geometry = storage(target), uniform_blocks(plan, target, "zephyr", "storage")
    if op.append_period_ms is None:
        why = "without append_period_ms nothing is appended again"
        return unused_field(op, ["operations", index, "lifetime_years"], why)
    if framework != "zephyr" or facts is None or geometry is None:
        return []
    block, count = geometry
    per_sector = max(1, (block - FCB_SECTOR_HEADER) // _entry_bytes(op, target))
    capacity = facts.flash.endurance_cycles * count * per_sector
    if capacity <= 0:
        return []  # no sector to wear: the sector rule reports the missing room
    per_day = DAY_MS / op.append_period_ms
    days = op.lifetime_years * 365.25
    needed = per_day * days
    if needed <= capacity:
        return []
    path: list[str | int] = ["operations", index, "append_period_ms"]
    period = math.ceil(DAY_MS * days / capacity)
    options = [relax(f"append at most every {period} ms", replace(path, period))] if period <= 31_536_000_000 else []
    options.append(relax("append once at start", remove(path)))
    return [violation(
        ENDURANCE, f"ring_log: appending every {op.append_period_ms} ms is {needed:.3g} records in "
        f"{op.lifetime_years} years; {count} sectors x {per_sector} records x {facts.flash.endurance_cycles} "
        f"erase cycles on {target.id} hold {capacity:.3g}", path, ["ring_log", target.id],
        [measure("append_period", op.append_period_ms, "ms"), measure("records_needed", needed, "records"),
         measure("records_per_sector", per_sector, "records"), measure("sectors", count, "count"),
         measure("endurance", facts.flash.endurance_cycles, "cycles"), measure("capacity", capacity, "records")],
        options,
    )]  # fmt: skip


def _zephyr(b: ZephyrBuilder, index: int, op: RingLog) -> dict[str, Any]:
    geometry = uniform_blocks(b.plan, b.target, "zephyr", "storage")
    if geometry is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id}: no uniform storage_partition", ["ring_log"], [])
    b.app.includes.update({"zephyr/fs/fcb.h", "zephyr/storage/flash_map.h", "string.h"})
    zephyr_flash_writer(b, "storage")
    b.app.need("storage", "CONFIG_FCB")
    return {"id": b.ids[index], "bytes": op.record_bytes, "sectors": geometry[1], "magic": f"0x{FCB_MAGIC:08X}U",
            "setup": True, "step": {"period_ms": op.append_period_ms}}  # fmt: skip


SPEC = OpSpec(
    model=RingLog,
    family="storage",
    realizations={
        "zephyr": Realization(template="storage", view=_zephyr, available=has_partition("zephyr", "storage")),
    },
    checks=(_exists, _sectors, _record, _endurance),
    codes=("E_PARTITION_MISSING", SECTOR, RECORD, ENDURANCE, UNUSED),
)
