"""The ``heap_region`` operation: a private heap (Zephyr ``k_heap``) that must hold the plan's peak demand.

Zephyr's ``sys_heap`` (behind ``k_heap``) works in 8-byte chunks; on a 32-bit target with fewer than
2^15 chunks (a heap under 256 KiB) each chunk header is 4 bytes, and ``sys_heap_init`` reserves the
end marker (4 bytes, 8 for a big heap) and a first chunk holding ``struct z_heap`` (16 bytes without
CONFIG_SYS_HEAP_RUNTIME_STATS) plus one 4-byte bucket per power-of-two size class (facts from
zephyrproject-rtos/zephyr lib/heap/heap.h @00cdac66c422 and lib/heap/heap.c @01b8849a177d:
``sys_heap_init``, ``bytes_to_chunksz``). :func:`chunks_needed` applies the same arithmetic, so the
obligation knows, before any build, whether ``blocks`` allocations of ``block_bytes`` fit at once:
E_HEAP_TOO_SMALL answers with the heap size that fits them, or the block count that fits the heap.
The heap's storage counts in the RAM budget (``OpSpec.ram``), like any buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.kernel import Timeout, timeout_expr
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: sys_heap's allocation unit (``CHUNK_UNIT``).
CHUNK_UNIT = 8
#: Chunk ids fit 15 bits below this many chunks: 2-byte fields, a 4-byte chunk header and footer.
SMALL_HEAP_CHUNKS = 0x7FFF
#: ``sizeof(struct z_heap)`` without runtime statistics (chunk0_hdr[2], end_chunk, avail_buckets).
Z_HEAP_BYTES = 16
#: ``sizeof(struct z_heap_bucket)``.
BUCKET_BYTES = 4


def _header(heap_bytes: int) -> int:
    return 4 if heap_bytes // CHUNK_UNIT <= SMALL_HEAP_CHUNKS else 8


def free_chunks(heap_bytes: int) -> int:
    """Chunks left for allocations once ``sys_heap_init`` has reserved the footer and chunk 0 (the
    ``K_HEAP_DEFINE`` buffer is 8-byte aligned, so no rounding at the start)."""
    heap_sz = (heap_bytes - _header(heap_bytes)) // CHUNK_UNIT
    if heap_sz < 2:
        return 0
    min_chunk = -(-(_header(heap_bytes) + 1) // CHUNK_UNIT)
    buckets = (heap_sz - min_chunk + 1).bit_length()
    chunk0 = -(-(Z_HEAP_BYTES + buckets * BUCKET_BYTES) // CHUNK_UNIT)
    return max(0, heap_sz - chunk0)


def chunks_needed(block_bytes: int, heap_bytes: int) -> int:
    """Chunks one allocation of ``block_bytes`` takes (``bytes_to_chunksz``: the bytes plus the header,
    rounded up to whole chunks)."""
    return block_bytes // CHUNK_UNIT + -(-(block_bytes % CHUNK_UNIT + _header(heap_bytes)) // CHUNK_UNIT)


def fits(heap_bytes: int, blocks: int, block_bytes: int) -> bool:
    return blocks * chunks_needed(block_bytes, heap_bytes) <= free_chunks(heap_bytes)


class HeapRegion(Operation):
    """Define a private heap of ``heap_bytes`` and prove it holds the plan's peak demand once: allocate
    ``blocks`` blocks of ``block_bytes`` at the same time (each allocation waits at most
    ``alloc_timeout_ms``, ms or ``forever``: the plan says which), write them, free them all.

    The allocator's own overhead (headers, bucket table, end marker) is part of ``heap_bytes``: a heap
    whose peak demand cannot fit is E_HEAP_TOO_SMALL, with the size that would fit. The heap's storage
    counts against the default RAM like any buffer.
    """

    op: Literal["heap_region"]
    heap_bytes: int = Field(ge=64, le=1 << 20, description="Bytes of the heap region, allocator overhead included.")
    blocks: int = Field(ge=1, le=1024, description="Allocations live at the same time (the peak).")
    block_bytes: int = Field(ge=1, le=1 << 20, description="Bytes each allocation asks for.")
    alloc_timeout_ms: Timeout


TOO_SMALL = "E_HEAP_TOO_SMALL"


def _minimum(blocks: int, block_bytes: int) -> int:
    """The smallest heap size (a multiple of the chunk) that holds ``blocks`` × ``block_bytes`` at once."""
    size = max(64, blocks * (block_bytes + 8))
    while not fits(size, blocks, block_bytes):
        size += CHUNK_UNIT
    return size


def _check(plan: Plan, target: Target, framework: str, index: int, op: HeapRegion) -> list[Evidence]:
    """E_HEAP_TOO_SMALL: the peak (``blocks`` allocations at once, each rounded to chunks with its header)
    exceeds the chunks left after the allocator's metadata. Relaxations: the heap size that fits, or the
    most blocks the heap holds."""
    if fits(op.heap_bytes, op.blocks, op.block_bytes):
        return []
    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    per = chunks_needed(op.block_bytes, op.heap_bytes)
    room = free_chunks(op.heap_bytes)
    need = _minimum(op.blocks, op.block_bytes)
    options = [relax(f"grow the heap to {need} bytes", replace([*base, "heap_bytes"], need))]
    if room // per >= 1:
        options.append(relax(f"allocate {room // per} blocks at once", replace([*base, "blocks"], room // per)))
    return [
        violation(
            TOO_SMALL,
            f"heap {label} of {op.heap_bytes} bytes has {room * CHUNK_UNIT} bytes for allocations after its "
            f"metadata; {op.blocks} blocks of {op.block_bytes} bytes take {op.blocks * per * CHUNK_UNIT} "
            f"({per} chunks of {CHUNK_UNIT} bytes each, header included)",
            [*base, "heap_bytes"],
            [label, "heap_bytes", "blocks"],
            [
                measure("heap", op.heap_bytes, "bytes"),
                measure("usable", room * CHUNK_UNIT, "bytes"),
                measure("peak", op.blocks * per * CHUNK_UNIT, "bytes"),
            ],
            options,
        )
    ]


def _storage(op: HeapRegion) -> tuple[int, str]:
    """The heap's storage for the RAM-budget obligation, sized by ``heap_bytes``."""
    return op.heap_bytes, "heap_bytes"


def _smaller(op: HeapRegion, excess: int) -> int | None:
    """A heap smaller by ``excess`` bytes, when it still holds the peak demand (None otherwise)."""
    size = (op.heap_bytes - excess) // CHUNK_UNIT * CHUNK_UNIT
    return size if size >= 64 and fits(size, op.blocks, op.block_bytes) else None


def _zephyr(b: ZephyrBuilder, index: int, op: HeapRegion) -> dict[str, Any]:
    b.app.includes.update({"zephyr/kernel.h", "string.h"})
    return {
        "heap_bytes": op.heap_bytes,
        "blocks": op.blocks,
        "block_bytes": op.block_bytes,
        "timeout": timeout_expr(op.alloc_timeout_ms),
        "step": {"period_ms": None},
    }


SPEC = OpSpec(
    model=HeapRegion,
    family="memory",
    realizations={"zephyr": Realization(template="memory", view=_zephyr)},
    checks=(_check,),
    ram=_storage,
    ram_relief=_smaller,
    codes=(TOO_SMALL,),
)
