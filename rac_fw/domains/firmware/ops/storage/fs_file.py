"""The ``fs_file`` operation: LittleFS on the board's storage partition, mounted (formatted when the mount
fails, unless told not to), a file written, closed, opened again and read back.

Obligations (this module): the storage partition exists (E_PARTITION_MISSING); it is made of equal erase
blocks, which LittleFS takes as its block size (E_SECTOR_SIZE names mixed sectors); it holds the file
beside LittleFS's own blocks (E_PARTITION_TOO_SMALL, in blocks); the cache is a multiple of the program
unit and divides the block (E_FS_CACHE, LittleFS's ``lfs_config`` rules); and the caches count against
the RAM budget (``ram``: the RAM obligation's evidence, with a smaller cache as relief).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import storage
from rac_fw.domains.firmware.ops.storage.area import (
    TOO_SMALL,
    area,
    erase_block,
    has_partition,
    missing,
    zephyr_flash_writer,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

CACHE = "E_FS_CACHE"
SECTOR = "E_SECTOR_SIZE"
#: LittleFS keeps its superblock/root metadata pair in two blocks and needs one free block to copy a
#: block on write (copy-on-write): blocks beyond the file's own data.
LFS_RESERVED_BLOCKS = 3
#: Zephyr's LittleFS read size (CONFIG_FS_LITTLEFS_READ_SIZE default) and the smallest program size.
LFS_READ_BYTES = 16
#: The RAM the file system takes per cache-sized unit: read and program caches, the open file's cache
#: and this operation's write and read-back chunks.
CACHE_UNITS = 5
MOUNT_POINT = "/lfs"


class FsFile(Operation):
    """Mount LittleFS on the storage partition at ``/lfs`` and write ``file_bytes`` bytes to ``/lfs/<file>``
    in cache-sized chunks, close it, open it again and compare what reads back.

    When the mount fails (a blank or corrupt partition) Zephyr's LittleFS formats the partition and
    mounts again (``format_on_failure``); with ``format_on_failure: false`` the mount carries
    ``FS_MOUNT_FLAG_NO_FORMAT`` and the failure is reported instead (existing data is never erased).
    """

    op: Literal["fs_file"]
    file: Name
    file_bytes: int = Field(ge=1, le=1 << 20, description="Bytes written and read back.")
    cache_bytes: int = Field(
        default=64, ge=16, le=4096, description="LittleFS cache size, bytes (CONFIG_FS_LITTLEFS_CACHE_SIZE)."
    )
    lookahead_bytes: int = Field(
        default=32, ge=8, le=1024, description="LittleFS lookahead buffer, bytes (a multiple of 8)."
    )
    format_on_failure: bool = True

    @model_validator(mode="after")
    def _lookahead(self) -> FsFile:
        if self.lookahead_bytes % 8:
            raise ValueError("'lookahead_bytes' must be a multiple of 8 (LittleFS lookahead_size)")
        return self


def _prog_bytes(target: Target) -> int:
    facts = storage(target)
    return max(LFS_READ_BYTES, facts.flash.write_unit("zephyr") if facts else LFS_READ_BYTES)


def _geometry(plan: Any, target: Target) -> tuple[int, int] | None:
    """``(block_bytes, block_count)`` of the storage partition, None when missing or of mixed sectors."""
    facts, part = storage(target), area(plan, target, "zephyr", "storage")
    if facts is None or part is None:
        return None
    block = erase_block(facts, part)
    return None if block is None else (block, part.size // block)


def _exists(plan: Plan, target: Target, framework: str, index: int, op: FsFile) -> list[Evidence]:
    return missing(plan, target, framework, index, "storage", f"fs_file {op.file}")


def _blocks(plan: Plan, target: Target, framework: str, index: int, op: FsFile) -> list[Evidence]:
    facts, part = storage(target), area(plan, target, framework, "storage")
    if framework != "zephyr" or facts is None or part is None:
        return []
    geometry = _geometry(plan, target)
    if geometry is None:
        sizes = sorted({size for _, size in facts.flash.blocks_in(part.offset, part.size)})
        return [violation(
            SECTOR, f"fs_file {op.file}: {part.name} mixes erase blocks of {', '.join(map(str, sizes))} bytes; "
            "LittleFS needs one block size", ["operations", index], [part.name, target.id],
        )]  # fmt: skip
    block, count = geometry
    data = math.ceil(op.file_bytes / block)
    needed = data + LFS_RESERVED_BLOCKS
    if needed <= count:
        return []
    room = (count - LFS_RESERVED_BLOCKS) * block
    path: list[str | int] = ["operations", index, "file_bytes"]
    return [violation(
        TOO_SMALL, f"fs_file {op.file}: {op.file_bytes} bytes need {data} data blocks + {LFS_RESERVED_BLOCKS} of "
        f"LittleFS's own = {needed} blocks of {block} bytes; {part.name} has {count}",
        path, [part.name, op.file, target.id],
        [measure("file", op.file_bytes, "bytes"), measure("needed", needed, "blocks"),
         measure("available", count, "blocks")],
        [relax(f"write {room} bytes", replace(path, room))] if room > 0
        else [relax("drop this fs_file", remove(["operations", index]))],
    )]  # fmt: skip


def _cache(plan: Plan, target: Target, framework: str, index: int, op: FsFile) -> list[Evidence]:
    geometry = _geometry(plan, target)
    if framework != "zephyr" or geometry is None:
        return []
    block, prog = geometry[0], _prog_bytes(target)
    if op.cache_bytes % prog == 0 and block % op.cache_bytes == 0:
        return []
    fits = [c for c in (2**k for k in range(4, 13)) if c % prog == 0 and block % c == 0]
    path: list[str | int] = ["operations", index, "cache_bytes"]
    best = min(fits, key=lambda c: (abs(c - op.cache_bytes), c)) if fits else None
    return [violation(
        CACHE, f"fs_file {op.file}: a {op.cache_bytes}-byte cache must be a multiple of the {prog}-byte program "
        f"size and divide the {block}-byte block (LittleFS lfs_config)", path, [op.file, target.id],
        [measure("cache", op.cache_bytes, "bytes"), measure("prog", prog, "bytes"), measure("block", block, "bytes")],
        [relax(f"use a {best}-byte cache", replace(path, best))] if best else [],
    )]  # fmt: skip


def _ram(op: FsFile) -> tuple[int, str]:
    return CACHE_UNITS * op.cache_bytes + op.lookahead_bytes, "cache_bytes"


def _smaller_cache(op: FsFile, excess: int) -> int | None:
    """The largest power-of-two cache (≥ 16 bytes) that frees ``excess`` bytes."""
    for size in (2**k for k in range(12, 3, -1)):
        if size < op.cache_bytes and CACHE_UNITS * (op.cache_bytes - size) >= excess:
            return size
    return None


def _zephyr(b: ZephyrBuilder, index: int, op: FsFile) -> dict[str, Any]:
    if _geometry(b.plan, b.target) is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id}: no uniform storage_partition", [op.file], [])
    b.app.includes.update({"zephyr/fs/fs.h", "zephyr/fs/littlefs.h", "zephyr/storage/flash_map.h", "string.h"})
    zephyr_flash_writer(b, "storage")
    b.app.need("storage", "CONFIG_FILE_SYSTEM", "CONFIG_FILE_SYSTEM_LITTLEFS")
    b.app.setting("storage", "CONFIG_FS_LITTLEFS_CACHE_SIZE", str(op.cache_bytes))
    b.app.setting("storage", "CONFIG_FS_LITTLEFS_LOOKAHEAD_SIZE", str(op.lookahead_bytes))
    b.app.setting("storage", "CONFIG_FS_LITTLEFS_PROG_SIZE", str(_prog_bytes(b.target)))
    return {
        "id": b.ids[index],
        "path": c_string_literal(f"{MOUNT_POINT}/{op.file}"),
        "mount_point": c_string_literal(MOUNT_POINT),
        "bytes": op.file_bytes,
        "chunk": op.cache_bytes,
        "no_format": not op.format_on_failure,
        "setup": True,
        "step": {"period_ms": None},
    }


SPEC = OpSpec(
    model=FsFile,
    family="storage",
    realizations={
        "zephyr": Realization(template="storage", view=_zephyr, available=has_partition("zephyr", "storage")),
    },
    checks=(_exists, _blocks, _cache),
    ram=_ram,
    ram_relief=_smaller_cache,
    codes=("E_PARTITION_MISSING", TOO_SMALL, SECTOR, CACHE),
)
