"""The ``fs_file`` operation: a file system on the board's storage partition, mounted (formatted when the
mount fails, unless told not to), a file written, closed, opened again and read back. Zephyr: LittleFS on
``storage_partition``. ESP-IDF: FAT on wear levelling (both in core ESP-IDF; LittleFS is a managed component
outside it) on the ``storage`` data/fat partition the board facts add to the plan's partition table.

Obligations (this module): the partition exists (E_PARTITION_MISSING). Zephyr: it is made of equal erase
blocks, which LittleFS takes as its block size (E_SECTOR_SIZE names mixed sectors); it holds the file
beside LittleFS's own blocks (E_PARTITION_TOO_SMALL, in blocks); the cache is a multiple of the program
unit and divides the block (E_FS_CACHE, LittleFS's ``lfs_config`` rules). ESP-IDF: the partition holds the
file's clusters beside wear levelling's own sectors and FAT's reserved, FAT and root-directory sectors
(E_PARTITION_TOO_SMALL, in sectors); the allocation unit is a power-of-two multiple of the 4096-byte WL
sector (E_FS_ALLOCATION_UNIT). The buffers count against the RAM budget (``ram``: LittleFS's caches; on
ESP-IDF the FAT window and one sector buffer per file ``max_files`` allows, with fewer files as relief).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import storage
from rac_fw.domains.firmware.ops.storage.area import (
    TOO_SMALL,
    AddsPartitions,
    area,
    has_partition,
    missing,
    uniform_blocks,
    zephyr_flash_writer,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.partitions import idf_partition_table
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
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
#: subsys/fs/Kconfig.littlefs: FS_LITTLEFS_NUM_FILES (files open at once) defaults to 4.
LFS_NUM_FILES_DEFAULT = 4
#: The partition role both realizations mount (``facts.storage``: Zephyr storage_partition, ESP-IDF storage).
ROLE = "filesystem"

UNIT = "E_FS_ALLOCATION_UNIT"
# --- ESP-IDF FAT on wear levelling ------------------------------------------------------------------------
#: wear_levelling (wear_levelling.cpp @4585ff806a40, CONFIG_WL_SECTOR_SIZE default 4096): WL's page and sector
#: are the 4096-byte flash sector, each dummy-block move is logged in a 16-byte record (WL_DEFAULT_WRITE_SIZE)
#: after the 64-byte ``wl_state_t`` (private_include/WL_State.h @122c48f63c94: 16 uint32_t, aligned 32).
WL_SECTOR = 4096
WL_STATE_BYTES = 64
WL_RECORD_BYTES = 16
#: FatFs R0.15 f_mkfs as ESP-IDF patches it (components/fatfs/src/ff.c @2c5dcc977e3d, called by
#: vfs_fat_spiflash.c with FM_ANY | FM_SFD and two FATs): one reserved (boot) sector, 32-byte directory
#: entries, at most 4085 FAT12 clusters (MAX_FAT12), at least one data cluster (MIN_FAT12_DATA_SEC); 128
#: root-directory entries for a volume of at most 128 sectors (vfs_fat_spiflash.c MIN_REQ_SEC) and FatFs's
#: default 512 above; an allocation unit a power of two between one and 128 sectors (esp_vfs_fat.h).
FAT_RESERVED = 1
FAT_COPIES = 2
FAT_DIR_ENTRY = 32
FAT12_MAX_CLUSTERS = 4085
FAT_SMALL_VOLUME = 128
FAT_MAX_UNIT_SECTORS = 128
FAT_MOUNT_POINT = "/fat"
#: The allocation units esp_vfs_fat_mount_config_t admits, bytes.
FAT_UNITS = tuple(WL_SECTOR << k for k in range(FAT_MAX_UNIT_SECTORS.bit_length()))


def wl_overhead(partition_bytes: int) -> tuple[int, int]:
    """``(sectors wear levelling keeps, sectors it offers FAT)`` on a partition (WL_Flash.cpp @06bab70822d3
    ``config``: two copies of the state — ``wl_state_t`` plus one record per sector, rounded up to sectors —
    one configuration sector and one dummy sector that moves through the data)."""
    sectors = partition_bytes // WL_SECTOR
    state = max(1, -(-(WL_STATE_BYTES + sectors * WL_RECORD_BYTES) // WL_SECTOR))
    own = 2 * state + 1 + 1
    return own, max(0, sectors - own)


@dataclass(frozen=True)
class FatLayout:
    """How f_mkfs lays FAT out on the sectors wear levelling offers (all counts in 4096-byte sectors)."""

    wl_sectors: int
    """Sectors wear levelling keeps (state copies, configuration, dummy)."""
    volume: int
    """Sectors the FAT volume gets (``wl_size / wl_sector_size``)."""
    fat_sectors: int
    """Boot sector + the FAT copies + the root directory."""
    clusters: int
    """Data clusters of ``unit`` sectors."""
    unit: int

    @property
    def data_bytes(self) -> int:
        return self.clusters * self.unit * WL_SECTOR


def fat_layout(partition_bytes: int, unit_bytes: int) -> FatLayout:
    """FAT12/16 as ``f_mkfs`` formats a ``partition_bytes`` partition with ``unit_bytes`` clusters."""
    own, volume = wl_overhead(partition_bytes)
    unit = max(1, unit_bytes // WL_SECTOR)
    entries = FAT_DIR_ENTRY * (128 if volume <= FAT_SMALL_VOLUME else 512)
    root = entries // WL_SECTOR
    estimate = volume // unit
    table = (estimate * 3 + 1) // 2 + 3 if estimate <= FAT12_MAX_CLUSTERS else estimate * 2 + 4
    fat = -(-table // WL_SECTOR)
    system = FAT_RESERVED + FAT_COPIES * fat + root
    return FatLayout(own, volume, system, max(0, (volume - system) // unit), unit)


#: POSIX's portable filename characters (IEEE 1003.1 §3.282), not starting with '.': a name both Zephyr's LittleFS
#: (LFS_NAME_MAX 255) and ESP-IDF's FAT with long names (the realization sets FATFS_LFN_HEAP) store as written.
FileName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"),
    Field(description="File name in the volume's root: letters, digits, '.', '_', '-' (not first '.'); ≤ 64."),
]


class FsFile(Operation, AddsPartitions):
    """Mount a file system on the storage partition and write ``file_bytes`` bytes to ``<mount>/<file>``
    in cache-sized chunks, close it, open it again and compare what reads back.

    Zephyr: LittleFS at ``/lfs``. ESP-IDF: FAT on wear levelling at ``/fat`` (``esp_vfs_fat_spiflash_mount_rw_wl``
    on the ``storage`` partition, unmounted after the read-back). When the mount fails (a blank or corrupt
    partition) the partition is formatted and mounted again (``format_on_failure``); with
    ``format_on_failure: false`` the failure is reported instead (existing data is never erased).
    """

    partition_roles: ClassVar[tuple[str, ...]] = (ROLE,)

    op: Literal["fs_file"]
    file: FileName
    file_bytes: int = Field(ge=1, le=1 << 20, description="Bytes written and read back.")
    cache_bytes: int = Field(
        default=64, ge=16, le=4096,
        description="LittleFS cache size, bytes (CONFIG_FS_LITTLEFS_CACHE_SIZE); the write/read chunk on ESP-IDF.",
    )  # fmt: skip
    lookahead_bytes: int = Field(
        default=32, ge=8, le=1024, multiple_of=8, description="LittleFS lookahead buffer, bytes (lookahead_size)."
    )
    format_on_failure: bool = True
    max_files: int = Field(
        default=4, ge=1, le=16,
        description="Files open at once: ESP-IDF esp_vfs_fat_mount_config_t.max_files (each reserves a sector "
        "buffer; 4 as ESP-IDF's wear-levelling example), Zephyr CONFIG_FS_LITTLEFS_NUM_FILES (default 4).",
    )  # fmt: skip
    allocation_unit_bytes: int | None = Field(
        default=None, ge=512, le=1 << 20,
        description="ESP-IDF: the FAT cluster when formatting, bytes (allocation_unit_size; a power-of-two "
        "multiple of the 4096-byte wear-levelling sector, at most 128 sectors). None: one sector.",
    )  # fmt: skip


def _prog_bytes(target: Target) -> int:
    facts = storage(target)
    return max(LFS_READ_BYTES, facts.flash.write_unit("zephyr") if facts else LFS_READ_BYTES)


def _exists(plan: Plan, target: Target, framework: str, index: int, op: FsFile) -> list[Evidence]:
    return missing(plan, target, framework, index, ROLE, f"fs_file {op.file}")


def _blocks(plan: Plan, target: Target, framework: str, index: int, op: FsFile) -> list[Evidence]:
    facts, part = storage(target), area(plan, target, framework, ROLE)
    if framework != "zephyr" or facts is None or part is None:
        return []
    geometry = uniform_blocks(plan, target, "zephyr", ROLE)
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
    if framework == "espidf" and "lookahead_bytes" in op.model_fields_set:
        at: list[str | int] = ["operations", index, "lookahead_bytes"]
        return [violation(
            CACHE, f"fs_file {op.file}: FAT keeps no lookahead buffer; lookahead_bytes applies to Zephyr's LittleFS",
            at, [op.file, target.id], [measure("lookahead", op.lookahead_bytes, "bytes")],
            [relax("drop lookahead_bytes", remove(at))],
        )]  # fmt: skip
    geometry = uniform_blocks(plan, target, "zephyr", ROLE)
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
    if uniform_blocks(b.plan, b.target, "zephyr", ROLE) is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id}: no uniform storage_partition", [op.file], [])
    b.app.includes.update({"zephyr/fs/fs.h", "zephyr/fs/littlefs.h", "zephyr/storage/flash_map.h", "string.h"})
    zephyr_flash_writer(b, "storage")
    b.app.need("storage", "CONFIG_FILE_SYSTEM", "CONFIG_FILE_SYSTEM_LITTLEFS")
    b.app.setting("storage", "CONFIG_FS_LITTLEFS_CACHE_SIZE", str(op.cache_bytes))
    b.app.setting("storage", "CONFIG_FS_LITTLEFS_LOOKAHEAD_SIZE", str(op.lookahead_bytes))
    b.app.setting("storage", "CONFIG_FS_LITTLEFS_PROG_SIZE", str(_prog_bytes(b.target)))
    if op.max_files != LFS_NUM_FILES_DEFAULT:
        b.app.setting("storage", "CONFIG_FS_LITTLEFS_NUM_FILES", str(op.max_files))
    return {
        "id": b.ids[index],
        "path": c_string(f"{MOUNT_POINT}/{op.file}"),
        "mount_point": c_string(MOUNT_POINT),
        "bytes": op.file_bytes,
        "chunk": op.cache_bytes,
        "no_format": not op.format_on_failure,
        "setup": True,
        "step": {"period_ms": None},
    }



# --- ESP-IDF: FAT on wear levelling -----------------------------------------------------------------------
def _unit_bytes(op: FsFile) -> int:
    return op.allocation_unit_bytes or WL_SECTOR


def _unit(plan: Plan, target: Target, framework: str, index: int, op: FsFile) -> list[Evidence]:
    """The allocation unit is a power-of-two number of WL sectors, 1…128 (esp_vfs_fat.h: any other value is
    rounded by esp_vfs_fat_get_allocation_unit_size and then replaced by f_mkfs's own choice)."""
    unit = op.allocation_unit_bytes
    path: list[str | int] = ["operations", index, "allocation_unit_bytes"]
    if unit is not None and framework == "zephyr":
        return [violation(
            UNIT, f"fs_file {op.file}: LittleFS allocates in the partition's erase blocks; an allocation unit of "
            f"{unit} bytes applies to ESP-IDF's FAT only", path, [op.file, target.id],
            [measure("allocation_unit", unit, "bytes")], [relax("let LittleFS use the erase block", remove(path))],
        )]  # fmt: skip
    if framework != "espidf" or unit is None:
        return []
    valid = FAT_UNITS
    if unit in valid:
        return []
    below = [v for v in valid if v < unit]
    above = [v for v in valid if v > unit]
    options = [relax(f"use {v}-byte clusters", replace(path, v)) for v in (below[-1:] + above[:1])]
    return [violation(
        UNIT, f"fs_file {op.file}: an allocation unit of {unit} bytes is not a power-of-two multiple of the "
        f"{WL_SECTOR}-byte wear-levelling sector between {valid[0]} and {valid[-1]} bytes (esp_vfs_fat_mount_config_t)",
        path, [op.file, target.id],
        [measure("allocation_unit", unit, "bytes"), measure("sector", WL_SECTOR, "bytes"),
         measure("max_allocation_unit", valid[-1], "bytes")],
        options + [relax("use one sector per cluster", remove(path))],
    )]  # fmt: skip


def _fat_room(plan: Plan, target: Target, framework: str, index: int, op: FsFile) -> list[Evidence]:
    """The file's clusters fit the volume f_mkfs makes of what wear levelling leaves (in sectors)."""
    part = area(plan, target, framework, ROLE)
    unit = _unit_bytes(op)
    if framework != "espidf" or part is None or unit not in FAT_UNITS:
        return []
    layout = fat_layout(part.size, unit)
    clusters = -(-op.file_bytes // unit)
    if clusters <= layout.clusters:
        return []
    needed = layout.wl_sectors + layout.fat_sectors + clusters * layout.unit
    sectors = part.size // WL_SECTOR
    room = min(layout.data_bytes, 1 << 20)
    path: list[str | int] = ["operations", index, "file_bytes"]
    options = [relax(f"write {room} bytes", replace(path, room))] if room else []
    if unit > WL_SECTOR:
        options.append(relax("use one sector per cluster", remove(["operations", index, "allocation_unit_bytes"])))
    options.append(relax("drop this fs_file", remove(["operations", index])))
    return [violation(
        TOO_SMALL, f"fs_file {op.file}: {op.file_bytes} bytes need {clusters} clusters of {layout.unit} sector(s) "
        f"+ {layout.fat_sectors} FAT sectors (boot, {FAT_COPIES} FATs, root directory) + {layout.wl_sectors} "
        f"wear-levelling sectors = {needed} sectors of {WL_SECTOR} bytes; {part.name} has {sectors}",
        path, [part.name, op.file, target.id],
        [measure("file", op.file_bytes, "bytes"), measure("needed", needed, "sectors"),
         measure("available", sectors, "sectors"), measure("wear_levelling", layout.wl_sectors, "sectors"),
         measure("fat", layout.fat_sectors, "sectors"), measure("data_room", layout.data_bytes, "bytes")],
        options,
    )]  # fmt: skip


def _fat_ram(op: FsFile) -> tuple[int, str]:
    """FAT's heap at mount (vfs_fat.c esp_vfs_fat_register_cfg: ``sizeof(vfs_fat_ctx_t) + max_files *
    sizeof(FIL)``; the context holds the FATFS sector window, each FIL its own sector buffer under
    CONFIG_FATFS_PER_FILE_CACHE, default y in components/fatfs/Kconfig @02b62b3378f8) and the two chunks."""
    return WL_SECTOR * (1 + op.max_files) + 2 * op.cache_bytes, "max_files"


def _fewer_files(op: FsFile, excess: int) -> int | None:
    """The most files open at once that frees ``excess`` bytes (None: even one does not)."""
    fewer = op.max_files - -(-excess // WL_SECTOR)
    return fewer if fewer >= 1 else None


def _espidf(b: EspIdfBuild, index: int, op: FsFile) -> dict[str, Any]:
    part = area(b.plan, b.target, "espidf", ROLE)
    if part is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id}: no FAT partition in the table")
    idf_partition_table(b)
    b.requires.update({"fatfs", "wear_levelling"})
    # Long file names (a plan's name may exceed 8.3): components/fatfs/Kconfig @02b62b3378f8 defaults the choice
    # FATFS_LONG_FILENAMES to FATFS_LFN_NONE; the heap variant keeps the name buffer off the task stack.
    b.sdkconfig["CONFIG_FATFS_LFN_HEAP"] = "y"
    return {
        "path": c_string(f"{FAT_MOUNT_POINT}/{op.file}"),
        "base_path": c_string(FAT_MOUNT_POINT),
        "partition": c_string(part.name),
        "bytes": op.file_bytes,
        "chunk": min(op.cache_bytes, op.file_bytes),
        "format": op.format_on_failure,
        "max_files": op.max_files,
        "unit": op.allocation_unit_bytes or 0,
    }


SPEC = OpSpec(
    model=FsFile,
    family="storage",
    realizations={
        "zephyr": Realization(template="storage", view=_zephyr, available=has_partition("zephyr", ROLE)),
        "espidf": Realization(
            template="storage", view=_espidf, available=has_partition("espidf", ROLE), ram=_fat_ram,
            ram_relief=_fewer_files,
        ),  # fmt: skip
    },
    checks=(_exists, _blocks, _cache, _unit, _fat_room),
    ram=_ram,
    ram_relief=_smaller_cache,
    codes=("E_PARTITION_MISSING", TOO_SMALL, SECTOR, CACHE, UNIT),
)
