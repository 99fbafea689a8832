"""The ``mem_slab`` operation: a fixed-block memory slab, exercised once (allocate every block, free them).

Obligations of its own: a block size that is a multiple of the word (``k_mem_slab_init``: "slab_block_size
must also be a multiple of N", N the word size, and the buffer aligned to N — 4 bytes on the 32-bit
targets) and an alignment that is a power of two no smaller than the word (``E_SLAB_ALIGNMENT``); the
slab's storage must fit the RAM the plan has left, which the shared RAM-budget obligation judges
(``E_RAM_BUDGET``, asked with the storage as one more buffer, answered with fewer blocks).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: The word of the 32-bit targets (Zephyr builds native_sim 32-bit too): slab blocks and buffer align to it.
WORD_BYTES = 4


class MemSlab(Operation):
    """Define a memory slab of ``blocks`` fixed-size blocks and prove it once: allocate every block, free them.

    ``block_bytes`` must be a multiple of the word (4 bytes); ``align_bytes`` a power of two (at least 4).
    The storage (``blocks`` × ``block_bytes``) counts against the default RAM like any buffer.
    """

    op: Literal["mem_slab"]
    blocks: int = Field(ge=1, le=4096, description="Number of blocks.")
    block_bytes: int = Field(ge=4, le=65536, description="Bytes per block (a multiple of 4).")
    align_bytes: int = Field(default=4, ge=4, le=4096, description="Alignment of each block (a power of two).")


ALIGNMENT = "E_SLAB_ALIGNMENT"


def _alignment(plan: Plan, target: Target, framework: str, index: int, op: MemSlab) -> list[Evidence]:

    found = []
    where: list[str | int] = ["operations", index]
    step = math.lcm(WORD_BYTES, op.align_bytes if op.align_bytes & (op.align_bytes - 1) == 0 else WORD_BYTES)
    if op.block_bytes % step:
        up = -(-op.block_bytes // step) * step
        fixes = [relax(f"round the blocks up to {up} bytes", replace([*where, "block_bytes"], up))]
        if op.block_bytes > step:
            down = op.block_bytes // step * step
            fixes.append(relax(f"round the blocks down to {down} bytes", replace([*where, "block_bytes"], down)))
        found.append(
            violation(
                ALIGNMENT,
                f"slab {op.name or index} blocks of {op.block_bytes} bytes are not a multiple of {step} bytes "
                "(each block must start aligned: k_mem_slab_init returns -EINVAL)",
                [*where, "block_bytes"],
                [op.name or f"operations[{index}]", "block_bytes"],
                [measure("block", op.block_bytes, "bytes"), measure("multiple", step, "bytes")],
                fixes,
            )
        )
    if op.align_bytes & (op.align_bytes - 1):
        up = 1 << op.align_bytes.bit_length()
        found.append(
            violation(
                ALIGNMENT,
                f"slab {op.name or index} alignment {op.align_bytes} bytes is not a power of two",
                [*where, "align_bytes"],
                [op.name or f"operations[{index}]", "align_bytes"],
                [measure("align", op.align_bytes, "bytes")],
                [
                    relax(f"align to {a} bytes", replace([*where, "align_bytes"], a))
                    for a in (up >> 1, up)
                    if a >= WORD_BYTES and op.block_bytes % a == 0
                ]
                or [relax(f"align to {WORD_BYTES} bytes", replace([*where, "align_bytes"], WORD_BYTES))],
            )
        )
    return found


def _storage(op: MemSlab) -> tuple[int, str]:
    """The slab's storage (blocks × block size) for the RAM-budget obligation, sized by ``blocks``."""
    return op.blocks * op.block_bytes, "blocks"


def _fewer_blocks(op: MemSlab, excess: int) -> int | None:
    """The block count that frees ``excess`` bytes (None when not even one block would be left)."""
    keep = op.blocks - -(-excess // op.block_bytes)
    return keep if keep >= 1 else None


def _zephyr(b: ZephyrBuilder, index: int, op: MemSlab) -> dict[str, Any]:
    b.app.includes.add("zephyr/kernel.h")
    return {"blocks": op.blocks, "block_bytes": op.block_bytes, "align": op.align_bytes, "step": {"period_ms": None}}


SPEC = OpSpec(
    model=MemSlab,
    family="memory",
    realizations={"zephyr": Realization(template="memory", view=_zephyr)},
    checks=(_alignment,),
    ram=_storage,
    ram_relief=_fewer_blocks,
    codes=(ALIGNMENT,),
)
