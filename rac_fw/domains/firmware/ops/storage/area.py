"""The flash area a storage or update operation uses, and the evidence when the board's map lacks it.

Shared by the ``storage`` and ``update`` op specs (``ops/update`` imports it): which partition plays a
role for a framework (``facts.storage.role``), the erase block it is made of, and the located
violation — with the frameworks whose map has the partition as relaxations — when it is missing. The
ESP-IDF table a plan is built with is ``plan/partitions``, which the ``bootloader`` block writes too.

Checks import ``obligations.evidence`` when they run: the ``obligations`` package imports the plan
model, which imports every op spec, so a module-level import here would be a cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.storage import Partition, Storage, role, storage
from rac_fw.domains.firmware.plan.evidence import measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.partitions import data_partitions, uses_ota_table

MISSING = "E_PARTITION_MISSING"
TOO_SMALL = "E_PARTITION_TOO_SMALL"
ALIGNMENT = "E_WRITE_ALIGNMENT"


def zephyr_flash_writer(b: Any, family: str) -> None:
    """The Kconfig every Zephyr operation that writes the internal flash needs: the flash driver and map,
    the page layout NVS and the image writer look sectors up in, and — on a core whose MPU maps flash
    read-only — ``MPU_ALLOW_FLASH_WRITE`` (samples/subsys/nvs/prj.conf sets the same)."""
    symbols = ["CONFIG_FLASH", "CONFIG_FLASH_MAP", "CONFIG_FLASH_PAGE_LAYOUT"]
    if b.target.core.mpu:
        symbols.append("CONFIG_MPU_ALLOW_FLASH_WRITE")
    b.app.need(family, *symbols)


class AddsPartitions:
    """Mixed into an operation model whose realization needs a data partition the stock ESP-IDF table lacks:
    ``partition_roles`` names the roles (``facts.storage.IDF_ROLES``) the plan's table gains from the board's
    ``idf_data_partitions`` when the operation is in the plan."""

    partition_roles: ClassVar[tuple[str, ...]] = ()


def area(plan: Any, target: Target, framework: str, name: str) -> Partition | None:
    """The partition playing role ``name`` (storage, slot0, slot1…) for this plan, or None: the one place
    that decides a plan's partition map (ESP-IDF: the OTA table under a ``bootloader`` block, plus the data
    partitions its operations ask for)."""
    facts = storage(target)
    return None if facts is None else role(facts, framework, name, uses_ota_table(plan), data_partitions(plan))


def has_partition(framework: str, name: str) -> Callable[[Target], bool]:
    """Availability: the board's ``framework`` flash map has the ``name`` partition (default table, with every
    data partition the board can add)."""

    def available(target: Target) -> bool:
        facts = storage(target)
        extra = tuple(p.name for p in facts.idf_data) if facts else ()
        return facts is not None and role(facts, framework, name, data=extra) is not None

    return available


def erase_block(facts: Storage, part: Partition) -> int | None:
    """The erase block size of ``part`` when all its blocks are equal (None for mixed sectors)."""
    sizes = {size for _, size in facts.flash.blocks_in(part.offset, part.size)}
    return sizes.pop() if len(sizes) == 1 else None


def uniform_blocks(plan: Any, target: Target, framework: str, name: str) -> tuple[int, int] | None:
    """``(block_bytes, block_count)`` of the partition playing role ``name``: the equal erase blocks a file
    system or a sector-based store (LittleFS, FCB, NVS) takes as its unit; None when the partition is missing
    or mixes block sizes."""
    facts, part = storage(target), area(plan, target, framework, name)
    if facts is None or part is None:
        return None
    block = erase_block(facts, part)
    return None if block is None else (block, part.size // block)


def missing(plan: Any, target: Target, framework: str, index: int, name: str, what: str) -> list[Evidence]:
    """E_PARTITION_MISSING when ``framework``'s map of this board has no ``name`` partition (a framework
    that does not realize the operation at all is the support rule's answer, not this one's)."""
    from rac_fw.domains.firmware.plan.registry import spec

    kind = plan.operations[index].op
    if spec(kind).realization(framework) is None or area(plan, target, framework, name) is not None:
        return []
    others = [
        f
        for f in target.frameworks
        if f != framework and spec(kind).realization(f) is not None and area(plan, target, f, name) is not None
    ]
    return [
        violation(
            MISSING,
            f"{what} needs the {name} partition, and the {framework} flash map of {target.id} has none"
            + (f" (the {', '.join(others)} map has one)" if others else ""),
            ["operations", index],
            [name, target.id, framework],
            relaxations=[relax(f"use framework {f}", replace(["framework"], f)) for f in others]
            + [relax(f"drop this {kind}", remove(["operations", index]))],
        )
    ]


def aligned(index: int, field: str, value: int, unit: int, what: str, objects: list[str]) -> list[Evidence]:
    """E_WRITE_ALIGNMENT when ``value`` (an offset or length, bytes) is not a multiple of the program unit."""

    if value % unit == 0:
        return []
    up = -(-value // unit) * unit
    down = value // unit * unit
    options = [relax(f"round {field} up to {up} bytes", replace(["operations", index, field], up))]
    if down > 0:
        options.append(relax(f"round {field} down to {down} bytes", replace(["operations", index, field], down)))
    return [
        violation(
            ALIGNMENT,
            f"{what}: {field} {value} bytes is not a multiple of the {unit}-byte flash write block",
            ["operations", index, field],
            objects,
            [measure(field, value, "bytes"), measure("write_block", unit, "bytes")],
            options,
        )
    ]
