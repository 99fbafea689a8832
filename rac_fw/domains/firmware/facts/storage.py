"""Storage facts: the internal flash's geometry, the board's partition maps and the boot modes they allow.

These are the numbers storage and update obligations compare against: the erase block holding an
offset, the program unit every write must be a multiple of, how many erase cycles a block survives,
where the board's ``storage`` / ``slot0`` / ``slot1`` / ``scratch`` partitions lie (Zephyr's board
devicetree ``fixed-partitions``) and ESP-IDF's partition tables (the default single-app table and the
two-OTA table an updatable application uses). Which MCUboot modes apply is *derived* from the map
(a swap needs a secondary slot, swap-scratch a scratch partition), never listed per board.

The pack holds them as data in one ``flash`` table: the geometry in the chip facts, ``partitions`` and
``idf_partition_tables`` in the board facts (the loader merges a board's table over its chip's), each
with its source; the loader validates the table into ``Target.flash`` (:class:`FlashFacts`) and
:func:`storage` splits it into the typed :class:`Storage` below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target

McubootMode = Literal["swap_scratch", "swap_move", "overwrite_only", "direct_xip"]
"""MCUboot image-upgrade strategies (``SB_CONFIG_MCUBOOT_MODE_*``)."""

MCUBOOT_MODES: tuple[McubootMode, ...] = ("swap_scratch", "swap_move", "overwrite_only", "direct_xip")


@dataclass(frozen=True)
class EraseBlocks:
    """A run of ``count`` equal erase blocks (pages, sectors) of ``size`` bytes."""

    count: int
    size: int


@dataclass(frozen=True)
class VoltageScale:
    """One core-voltage range of the regulator (PWR VOS) and the flash wait states it allows."""

    scale: int
    """The scale number (``PWR_REGULATOR_VOLTAGE_SCALE<scale>``)."""
    cpu_max_hz: int
    """The highest CPU clock the range allows."""
    wait_states_hclk_max_hz: tuple[int, ...]
    """Highest HCLK each number of flash wait states allows in this range (index = wait states)."""


@dataclass(frozen=True)
class Flash:
    """The chip's internal (or module) flash as its controller programs it."""

    region: str
    """The memory region (``Target.memory``) this geometry describes."""
    erase_blocks: tuple[EraseBlocks, ...]
    """Erase units from offset 0 upwards (STM32F4: 4 × 16 KB, 1 × 64 KB, 7 × 128 KB sectors)."""
    write_block_bytes: int
    """Program unit: every write's offset and length are multiples of it (STM32H7: a 32-byte flash word)."""
    endurance_cycles: int
    """Erase/program cycles each block is specified to survive (data-sheet minimum)."""
    erased_value: int = 0xFF
    driver_write_block_bytes: int | None = None
    """The Zephyr driver's ``write-block-size`` where it is coarser than the hardware's (ESP32-S3: 4)."""
    encrypted_write_block_bytes: int | None = None
    """Program unit with flash encryption on (ESP32-S3: 16 bytes)."""
    max_writes_per_word: int | None = None
    """Writes allowed to one word between erases (nRF52 NVMC: nWRITE = 2)."""
    banks: int = 1
    voltage_scales: tuple[VoltageScale, ...] = ()
    """The regulator ranges and their wait-state tables, in the order a clock set-up prefers them (the reset
    scale first), for the HAL clock set-up (``facts.clock.flash_setting``)."""

    @property
    def size(self) -> int:
        return sum(b.count * b.size for b in self.erase_blocks)

    def block_at(self, offset: int) -> tuple[int, int] | None:
        """``(start, size)`` of the erase block holding ``offset`` (None beyond the flash)."""
        start = 0
        for run in self.erase_blocks:
            for _ in range(run.count):
                if start <= offset < start + run.size:
                    return start, run.size
                start += run.size
        return None

    def blocks_in(self, offset: int, size: int) -> list[tuple[int, int]]:
        """Every erase block ``(start, size)`` overlapping ``[offset, offset + size)``."""
        found, start = [], 0
        for run in self.erase_blocks:
            for _ in range(run.count):
                if start < offset + size and offset < start + run.size:
                    found.append((start, run.size))
                start += run.size
        return found

    def write_unit(self, framework: str) -> int:
        """The program unit a write through ``framework``'s flash driver must respect."""
        if framework == "zephyr" and self.driver_write_block_bytes:
            return max(self.write_block_bytes, self.driver_write_block_bytes)
        return self.write_block_bytes


@dataclass(frozen=True)
class Partition:
    """One partition of a board's flash map (a devicetree ``fixed-partitions`` child or an IDF table row)."""

    name: str
    """Zephyr: the node label (``storage_partition``); ESP-IDF: the table's name column (``nvs``)."""
    offset: int
    """Offset from the start of the flash device, in bytes."""
    size: int
    label: str = ""
    """Zephyr: the ``label`` property (``image-1``); ESP-IDF: ``type/subtype`` (``data/nvs``)."""
    read_only: bool = False

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class DataPartition:
    """An ESP-IDF data partition the board's table gains when an operation asks for it (the FAT
    ``storage`` partition of ESP-IDF's storage examples), written as a ``partitions.csv`` row with an
    empty offset: ESP-IDF's table generator places it after the row before it (:data:`IDF_DATA_ALIGN`)."""

    name: str
    """The table's name column, which is also the label ``esp_partition_find_first`` looks up."""
    label: str
    """``type/subtype`` (``data/fat``)."""
    size: int


#: ESP-IDF components/partition_table/gen_esp32part.py: a data partition with no offset starts at the
#: end of the previous row rounded up to 4 KB (the flash sector).
IDF_DATA_ALIGN = 0x1000


@dataclass(frozen=True)
class Storage:
    """Everything the storage and update obligations know about one target."""

    flash: Flash
    partitions: tuple[Partition, ...] = ()
    """Zephyr board devicetree ``fixed-partitions`` of the flash (empty: the board defines none)."""
    idf_tables: dict[str, tuple[Partition, ...]] = field(default_factory=dict)
    """ESP-IDF partition tables by name: ``default`` (what a project gets) and ``ota`` (two OTA slots)."""
    idf_data: tuple[DataPartition, ...] = ()
    """ESP-IDF data partitions an operation may add to either table (see :class:`DataPartition`)."""

    def partition_map(self, framework: str, ota: bool = False, data: tuple[str, ...] = ()) -> tuple[Partition, ...]:
        """The partitions an application of ``framework`` sees (ESP-IDF: the OTA table when ``ota``, with the
        board's data partitions named in ``data`` appended where they fit the flash)."""
        if framework == "espidf":
            rows = self.idf_tables.get("ota" if ota else "default", ())
            return rows + self._placed(rows, data) if rows else rows
        if framework == "zephyr":
            return self.partitions
        return ()

    def _placed(self, rows: tuple[Partition, ...], data: tuple[str, ...]) -> tuple[Partition, ...]:
        """``data``'s partitions placed after ``rows`` as ESP-IDF's generator places them (one that would
        run past the end of the flash is left out: the table has no room for it)."""
        placed: list[Partition] = []
        end = max(p.end for p in rows)
        for extra in self.idf_data:
            if extra.name not in data:
                continue
            offset = -(-end // IDF_DATA_ALIGN) * IDF_DATA_ALIGN
            if offset + extra.size > self.flash.size:
                continue
            placed.append(Partition(extra.name, offset, extra.size, extra.label))
            end = offset + extra.size
        return tuple(placed)

    def find(self, framework: str, name: str, ota: bool = False, data: tuple[str, ...] = ()) -> Partition | None:
        return next((p for p in self.partition_map(framework, ota, data) if p.name == name), None)


# --- the roles update code asks for, by the names each framework gives them --------------------------
#: Zephyr's MCUboot partitions (node labels the MCUboot and DFU code require by name).
ZEPHYR_ROLES = {"boot": "boot_partition", "slot0": "slot0_partition", "slot1": "slot1_partition",
                "scratch": "scratch_partition", "storage": "storage_partition",
                "filesystem": "storage_partition"}  # fmt: skip
#: ESP-IDF: the application slots of the OTA table and its data partitions (``storage``: records in NVS;
#: ``filesystem``: the FAT partition ESP-IDF's storage examples name ``storage``).
IDF_ROLES = {"slot0": "ota_0", "slot1": "ota_1", "otadata": "otadata", "storage": "nvs", "filesystem": "storage"}


def role(
    storage: Storage, framework: str, name: str, ota: bool = False, data: tuple[str, ...] = ()
) -> Partition | None:
    """The partition playing ``name`` (boot, slot0, slot1, scratch, storage, filesystem) for ``framework``
    (ESP-IDF: in the table with the board data partitions named in ``data``)."""
    names = IDF_ROLES if framework == "espidf" else ZEPHYR_ROLES
    return storage.find(framework, names[name], ota, data) if name in names else None


def mcuboot_modes(storage: Storage) -> dict[McubootMode, str | None]:
    """Each MCUboot mode → why this board's partition map cannot run it (None: it can).

    MCUboot needs its own partition and a primary slot; every upgrade mode needs a secondary slot;
    swap-scratch also needs the scratch partition it swaps through.
    """
    lacking = [ZEPHYR_ROLES[k] for k in ("boot", "slot0", "slot1") if role(storage, "zephyr", k) is None]
    base = None
    if lacking:
        secondary = " (no secondary slot)" if "slot1_partition" in lacking else ""
        base = f"the board's flash map has no {', no '.join(lacking)}{secondary}"
    result: dict[McubootMode, str | None] = {m: base for m in MCUBOOT_MODES}
    if base is None and role(storage, "zephyr", "scratch") is None:
        result["swap_scratch"] = "the board's flash map has no scratch_partition"
    return result


# --- the pack's table ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FlashFacts:
    """The pack's ``flash`` table as ``Target.flash`` holds it (validated at load): the chip's geometry keys
    (as in :class:`Flash`) and the board's ``partitions`` / ``idf_partition_tables`` merged into the same
    table. :func:`storage` splits it into the :class:`Storage` the rules ask."""

    region: str
    erase_blocks: tuple[EraseBlocks, ...]
    write_block_bytes: int
    endurance_cycles: int
    erased_value: int = 0xFF
    driver_write_block_bytes: int | None = None
    encrypted_write_block_bytes: int | None = None
    max_writes_per_word: int | None = None
    banks: int = 1
    voltage_scales: tuple[VoltageScale, ...] = ()
    partitions: tuple[Partition, ...] = ()
    """The board's devicetree ``fixed-partitions`` (see :attr:`Storage.partitions`)."""
    idf_partition_tables: dict[str, tuple[Partition, ...]] = field(default_factory=dict)
    """The board's ESP-IDF partition tables by name (see :attr:`Storage.idf_tables`)."""
    idf_data_partitions: tuple[DataPartition, ...] = ()
    """The board's ESP-IDF data partitions an operation may add (see :attr:`Storage.idf_data`)."""


_GEOMETRY = tuple(f for f in Flash.__dataclass_fields__)


def storage(target: Target) -> Storage | None:
    """The target's storage facts (None when the pack describes no flash)."""
    table = target.flash
    if table is None:
        return None
    geometry = Flash(**{name: getattr(table, name) for name in _GEOMETRY})
    return Storage(geometry, table.partitions, dict(table.idf_partition_tables), table.idf_data_partitions)


def flash(target: Target) -> Flash | None:
    """The target's flash geometry (None when the pack describes none)."""
    found = storage(target)
    return None if found is None else found.flash
