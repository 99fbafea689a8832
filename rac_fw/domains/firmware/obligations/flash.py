"""E_FLASH_ALIGNMENT: flash records respect the program unit and the erase unit.

Offsets and lengths are multiples of the program unit (STM32H7: 32-byte flash words; nRF52: 4-byte
words); an erase wipes a whole page/sector, so an erased record starts on an erase-unit boundary of
the storage area (one erase unit, the last of the flash) and fits inside it.
"""

from __future__ import annotations

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.obligations.evidence import Path, measure, relax, replace, violation
from rac_fw.domains.firmware.obligations.quantities import flash_geometry
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.ops.flash import FlashStore


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def check(plan: Plan, target: Target, framework: str) -> list[Evidence]:
    """Each flash_store against the program and erase granularity."""
    geometry = flash_geometry(target)
    if geometry is None:
        return []
    write, erase = geometry.write_bytes, geometry.erase_bytes
    found: list[Evidence] = []
    for i, op in enumerate(plan.operations):
        if not isinstance(op, FlashStore):
            continue
        problems = []
        if op.offset_bytes % write:
            problems.append(f"offset {op.offset_bytes} is not a multiple of the {write}-byte program unit")
        if op.size_bytes % write:
            problems.append(f"length {op.size_bytes} is not a multiple of the {write}-byte program unit")
        if op.erase and op.offset_bytes % erase:
            problems.append(
                f"erasing wipes the whole {erase}-byte erase unit, including the "
                f"{op.offset_bytes % erase} bytes before offset {op.offset_bytes}"
            )
        if op.offset_bytes + op.size_bytes > erase:
            problems.append(f"the record ends at {op.offset_bytes + op.size_bytes}, past the {erase}-byte storage area")
        if not problems:
            continue
        size = min(_round_up(op.size_bytes, write), erase - erase % write)
        offset = (op.offset_bytes // (erase if op.erase else write)) * (erase if op.erase else write)
        if offset + size > erase:
            offset = 0
        base: Path = ["operations", i]
        field = "size_bytes" if op.size_bytes % write or op.offset_bytes + op.size_bytes > erase else "offset_bytes"
        found.append(
            violation(
                "E_FLASH_ALIGNMENT",
                "; ".join(problems),
                [*base, field],
                [op.name or op.op, target.id],
                [
                    measure("program_unit", write, "bytes"),
                    measure("erase_unit", erase, "bytes"),
                    measure("offset", op.offset_bytes, "bytes"),
                    measure("size", op.size_bytes, "bytes"),
                ],
                [
                    relax(
                        f"store {size} bytes at offset {offset}",
                        replace([*base, "offset_bytes"], offset),
                        replace([*base, "size_bytes"], size),
                    )
                ],
            )
        )
    return found
