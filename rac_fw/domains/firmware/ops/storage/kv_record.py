"""The ``kv_record`` operation: a key-value record written, read back and verified (Zephyr NVS, ESP-IDF NVS).

Obligations (this module): the storage partition exists in the framework's flash map and holds the
file system's sectors (E_PARTITION_MISSING, E_PARTITION_TOO_SMALL); an NVS sector is a whole number of
erase blocks and fits NVS's 16-bit sector size (E_SECTOR_SIZE); the record fits a sector beside NVS's
allocation-table entries (E_RECORD_TOO_LARGE); and the save rate over the device's lifetime stays
within the erase cycles the partition's sectors survive (E_FLASH_ENDURANCE).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import Field

from rac_fw.contract import Evidence, Relaxation
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
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import UNUSED, measure, relax, remove, replace, unused_field, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

SECTOR = "E_SECTOR_SIZE"
RECORD = "E_RECORD_TOO_LARGE"
ENDURANCE = "E_FLASH_ENDURANCE"

#: Zephyr NVS (subsys/fs/nvs/nvs.c): an allocation-table entry is 8 bytes rounded up to the write block;
#: a record is at most ``sector_size - 4 * ate_size`` (its own ATE, the sector-close ATE, the GC-done ATE
#: and one kept free for a delete); ``struct nvs_fs.sector_size`` is a ``uint16_t``.
NVS_ATE_BYTES = 8
NVS_RESERVED_ATES = 4
NVS_MAX_SECTOR = 32768
#: ESP-IDF NVS (nvs_flash docs, "Entries"): 32-byte entries, a 4096-byte page holds 126 of them after its
#: 64-byte header and bitmap; a blob costs one index entry plus one header entry per page it spans.
IDF_ENTRY_BYTES = 32
IDF_PAGE_BYTES = 4096
IDF_PAGE_DATA = 4000
IDF_MAX_BLOB = 508000
#: ESP-IDF keys are at most 15 characters (NVS_KEY_NAME_MAX_SIZE 16, with the terminator).
IDF_KEY_MAX = 15

DAY_MS = 86_400_000


class KvRecord(Operation):
    """Write a ``value_bytes``-byte record under ``key``, read it back and compare (then delete it if asked).

    Zephyr: an NVS file system mounted on the board's ``storage_partition``; the record id is the
    operation's position (1, 2, …). ESP-IDF: ``nvs_flash`` on the partition table's ``nvs`` partition,
    namespace ``rac``, key ``key``. With ``save_period_ms`` the record is saved again every period (a
    counter in its first bytes), and the endurance obligation judges that rate over ``lifetime_years``.
    """

    op: Literal["kv_record"]
    key: Name = Field(description="Record key (ESP-IDF key, ≤ 15 characters; Zephyr names the NVS id after it).")
    value_bytes: int = Field(ge=1, le=65536, description="Record length in bytes.")
    sector_bytes: int | None = Field(
        default=None, ge=256, le=1 << 20, description="NVS sector size; None = the partition's erase block."
    )
    save_period_ms: int | None = Field(
        default=None, ge=1, le=31_536_000_000, description="Save again every period; None = save once at start."
    )
    lifetime_years: float = Field(default=10.0, gt=0, le=50, description="Service life the flash must survive.")
    delete: bool = Field(default=False, description="Delete the record after the verified read-back.")

    @property
    def name_bytes(self) -> int:
        """Bytes of a name stored beside the value (NVS ids and ESP-IDF keys live in the entry header)."""
        return 0


class Record(Protocol):
    """What the record obligations read of an operation that keeps a value in an NVS file system
    (``kv_record``; ``settings_value`` through the settings subsystem's NVS backend)."""

    @property
    def op(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def value_bytes(self) -> int: ...
    @property
    def sector_bytes(self) -> int | None: ...
    @property
    def save_period_ms(self) -> int | None: ...
    @property
    def lifetime_years(self) -> float: ...
    @property
    def name(self) -> str | None: ...
    @property
    def name_bytes(self) -> int: ...


# --- the geometry both the obligations and the lowerings use -------------------------------------------
def _sector(op: Record, target: Target, framework: str, plan: Any) -> tuple[int, int] | None:
    """``(sector_bytes, sector_count)`` the file system gets on this target (None: no partition)."""
    facts, part = storage(target), area(plan, target, framework, "storage")
    if facts is None or part is None:
        return None
    if framework == "espidf":
        return IDF_PAGE_BYTES, part.size // IDF_PAGE_BYTES
    sector = op.sector_bytes or erase_block(facts, part) or part.size
    return sector, part.size // sector


def _entry_bytes(op: Record, target: Target, framework: str) -> int:
    """Flash bytes one save consumes (data rounded to the program unit plus its table entries)."""
    facts = storage(target)
    unit = facts.flash.write_unit(framework) if facts else 1
    if framework == "espidf":
        pages = math.ceil(op.value_bytes / IDF_PAGE_DATA)
        return math.ceil(op.value_bytes / IDF_ENTRY_BYTES) * IDF_ENTRY_BYTES + (pages + 1) * IDF_ENTRY_BYTES
    entries = 2 if op.name_bytes else 1
    name = -(-op.name_bytes // unit) * unit if op.name_bytes else 0
    return -(-op.value_bytes // unit) * unit + name + entries * (-(-NVS_ATE_BYTES // unit) * unit)


def _ate_bytes(target: Target, framework: str) -> int:
    facts = storage(target)
    unit = facts.flash.write_unit(framework) if facts else 1
    return -(-NVS_ATE_BYTES // unit) * unit


# --- obligations ------------------------------------------------------------------------------------------
def _partition(plan: Plan, target: Target, framework: str, index: int, op: Record) -> list[Evidence]:
    return missing(plan, target, framework, index, "storage", f"{op.op} {op.key}")


def _sectors(plan: Plan, target: Target, framework: str, index: int, op: Record) -> list[Evidence]:

    facts, part, geometry = (
        storage(target),
        area(plan, target, framework, "storage"),
        _sector(op, target, framework, plan),
    )
    if facts is None or part is None or geometry is None or framework == "espidf":
        return []
    sector, count = geometry
    block = erase_block(facts, part)
    found: list[Evidence] = []
    path: list[str | int] = ["operations", index, "sector_bytes"]
    if block is None or sector % block or sector > NVS_MAX_SECTOR:
        why = (
            f"is not a multiple of the {block}-byte erase block" if block and sector % block
            else f"exceeds NVS's 16-bit sector size ({NVS_MAX_SECTOR} bytes)" if sector > NVS_MAX_SECTOR
            else "spans erase blocks of different sizes"
        )  # fmt: skip
        fixes = [block * k for k in (1, 2, 4, 8) if block and block * k <= min(NVS_MAX_SECTOR, part.size // 2)]
        found.append(
            violation(
                SECTOR,
                f"{op.op} {op.key}: an NVS sector of {sector} bytes on {part.name} of {target.id} {why}",
                path,
                [op.key, part.name, target.id],
                [
                    measure("sector", sector, "bytes"),
                    measure("erase_block", block or 0, "bytes"),
                    measure("max_sector", NVS_MAX_SECTOR, "bytes"),
                ],  # fmt: skip
                [relax(f"use {size}-byte sectors", replace(path, size)) for size in fixes]
                + [relax(f"use framework {f}", replace(["framework"], f)) for f in target.frameworks if f == "espidf"]
                + [relax(f"drop this {op.op}", remove(["operations", index]))]
                + [_raw_instead(target, framework, index, op)],
            )
        )
        return found
    if count < 2:
        fixes = [block * k for k in (1, 2) if block * k * 2 <= part.size and block * k != sector]
        found.append(
            violation(
                TOO_SMALL,
                f"{op.op} {op.key}: {part.name} ({part.size} bytes) holds {count} sector(s) of {sector} bytes; "
                "NVS needs at least 2 (one stays free for garbage collection)",
                path,
                [op.key, part.name, target.id],
                [
                    measure("partition", part.size, "bytes"),
                    measure("sector", sector, "bytes"),
                    measure("sectors", count, "count"),
                ],  # fmt: skip
                [relax(f"use {size}-byte sectors", replace(path, size)) for size in fixes],
            )
        )
    return found


def _raw_instead(target: Target, framework: str, index: int, op: Record) -> Relaxation:
    """Where NVS cannot run (erase blocks above its 16-bit sector size), keep the bytes raw in the
    storage partition instead: a ``flash_store`` of the record's length rounded to the write block."""

    facts = storage(target)
    unit = facts.flash.write_unit(framework) if facts else 1
    length = min(65536, -(-op.value_bytes // unit) * unit)
    raw = {"op": "flash_store", "length_bytes": length} | ({"name": op.name} if op.name else {})
    return relax(f"store the {length} bytes raw with flash_store", replace(["operations", index], raw))


def _record(plan: Plan, target: Target, framework: str, index: int, op: Record) -> list[Evidence]:

    geometry, part = _sector(op, target, framework, plan), area(plan, target, framework, "storage")
    if geometry is None or part is None:
        return []
    sector, count = geometry
    if framework == "espidf":
        limit = min(IDF_MAX_BLOB, int(0.976 * part.size) - IDF_PAGE_DATA)
        overhead = (
            f"ESP-IDF allows a blob of at most min({IDF_MAX_BLOB}, 97.6 % of {part.size} - {IDF_PAGE_DATA}) bytes"
        )
    else:
        ate = _ate_bytes(target, framework)
        limit = sector - NVS_RESERVED_ATES * ate
        overhead = f"an NVS sector of {sector} bytes keeps {NVS_RESERVED_ATES} allocation entries of {ate} bytes"
    if op.value_bytes <= limit or limit <= 0:
        return []
    path: list[str | int] = ["operations", index, "value_bytes"]
    return [
        violation(
            RECORD,
            f"{op.op} {op.key}: {op.value_bytes} bytes do not fit one record: {overhead}, leaving {limit} bytes",
            path,
            [op.key, part.name, target.id],
            [
                measure("record", op.value_bytes, "bytes"),
                measure("limit", limit, "bytes"),
                measure("sector", sector, "bytes"),
            ],  # fmt: skip
            [relax(f"store at most {limit} bytes per record", replace(path, limit))],
        )
    ]


def _endurance(plan: Plan, target: Target, framework: str, index: int, op: Record) -> list[Evidence]:
    """saves/day × lifetime ≤ endurance × sectors × records per sector erase."""

    facts, geometry = storage(target), _sector(op, target, framework, plan)
    if op.save_period_ms is None:
        why = "without save_period_ms nothing is saved again"
        return unused_field(op, ["operations", index, "lifetime_years"], why)
    if facts is None or geometry is None:
        return []
    sector, count = geometry
    entry = _entry_bytes(op, target, framework)
    per_erase = max(1, sector // entry)
    capacity = facts.flash.endurance_cycles * count * per_erase
    if capacity <= 0:
        return []  # no sector to wear: the sector rule (_sectors) reports the missing room
    per_day = DAY_MS / op.save_period_ms
    days = op.lifetime_years * 365.25
    needed = per_day * days
    if needed <= capacity:
        return []
    period_path: list[str | int] = ["operations", index, "save_period_ms"]
    min_period = math.ceil(DAY_MS * days / capacity)
    years = math.floor(capacity / per_day / 365.25 * 100) / 100
    options = []
    if min_period <= 31_536_000_000:
        options.append(relax(f"save at most every {min_period} ms", replace(period_path, min_period)))
    if years > 0:
        options.append(relax(f"plan for a {years}-year life", replace(["operations", index, "lifetime_years"], years)))
    options.append(relax("save once at start", remove(period_path)))
    return [
        violation(
            ENDURANCE,
            f"{op.op} {op.key}: saving every {op.save_period_ms} ms is {per_day:.0f} saves/day, "
            f"{needed:.3g} saves in {op.lifetime_years} years; the {count} sectors of {sector} bytes on "
            f"{target.id} take {facts.flash.endurance_cycles} erase cycles each and {per_erase} saves of "
            f"{entry} bytes per erase: {capacity:.3g} saves",
            period_path,
            [op.key, target.id],
            [
                measure("save_period", op.save_period_ms, "ms"),
                measure("saves_per_day", per_day, "saves/day"),
                measure("lifetime", op.lifetime_years, "years"),
                measure("saves_needed", needed, "saves"),
                measure("endurance", facts.flash.endurance_cycles, "cycles"),
                measure("sectors", count, "count"),
                measure("saves_per_erase", per_erase, "saves"),
                measure("saves_capacity", capacity, "saves"),
                measure("min_save_period", min_period, "ms"),
            ],
            options,
        )
    ]


def _key_length(plan: Plan, target: Target, framework: str, index: int, op: Record) -> list[Evidence]:

    if framework != "espidf" or len(op.key) <= IDF_KEY_MAX:
        return []
    path: list[str | int] = ["operations", index, "key"]
    short = op.key[:IDF_KEY_MAX].rstrip("_")
    return [
        violation(
            "E_KEY_TOO_LONG",
            f"{op.op} {op.key}: ESP-IDF NVS keys are at most {IDF_KEY_MAX} characters, this one has {len(op.key)}",
            path,
            [op.key],
            [measure("key_length", len(op.key), "characters"), measure("max", IDF_KEY_MAX, "characters")],
            [relax(f"use key {short!r}", replace(path, short))],
        )
    ]


# --- realizations -----------------------------------------------------------------------------------------
def _record_id(b: Any, index: int) -> int:
    """The NVS id: the record's position among the plan's kv_record operations (1, 2, …)."""
    return 1 + sum(1 for i, op in enumerate(b.plan.operations) if op.op == "kv_record" and i < index)


def _zephyr(b: ZephyrBuilder, index: int, op: KvRecord) -> dict[str, Any]:
    geometry = _sector(op, b.target, "zephyr", b.plan)
    if geometry is None:
        raise b.unsupported(f"operations.{index}", f"{b.target.id} has no storage_partition", [op.key], [])
    b.app.includes.update({"zephyr/fs/nvs.h", "zephyr/storage/flash_map.h", "string.h"})
    zephyr_flash_writer(b, "storage")
    b.app.need("storage", "CONFIG_NVS")
    # One NVS file system per partition: the plan's first kv_record mounts it, later ones add records
    # (two mounts of one area would each keep their own write pointer and overwrite the other's).
    first = next(i for i, other in enumerate(b.plan.operations) if other.op == "kv_record")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "fs": "app_storage_fs",
        "mounts": index == first,
        "record_id": _record_id(b, index),
        "bytes": op.value_bytes,
        "sector": geometry[0],
        "sectors": geometry[1],
        "delete": op.delete,
        "setup": index == first,
        "step": {"period_ms": op.save_period_ms},
    }
    return view


def _espidf(b: EspIdfBuild, index: int, op: KvRecord) -> dict[str, Any]:
    b.requires.add("nvs_flash")
    view: dict[str, Any] = {"key": c_string(op.key), "bytes": op.value_bytes, "delete": op.delete}
    if op.save_period_ms is not None:
        view["task"] = b.thread(None, b.symbol(index, op) + "_saver")
        view["period_ms"] = op.save_period_ms
    return view


SPEC = OpSpec(
    model=KvRecord,
    family="storage",
    realizations={
        "zephyr": Realization(template="storage", view=_zephyr, available=has_partition("zephyr", "storage")),
        "espidf": Realization(template="storage", view=_espidf, available=has_partition("espidf", "storage")),
    },
    checks=(_partition, _sectors, _record, _endurance, _key_length),
    codes=("E_PARTITION_MISSING", TOO_SMALL, SECTOR, RECORD, ENDURANCE, "E_KEY_TOO_LONG", UNUSED),
)
