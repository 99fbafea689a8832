"""The ``dma_scatter`` operation: a memory-to-memory copy as a chain of blocks, with status and abort.

A multi-block (scatter-gather) transfer is one ``dma_config`` whose ``head_block`` links ``blocks``
``dma_block_config`` entries through ``next_block`` (Zephyr include/zephyr/drivers/dma.h). Not every
driver walks the chain: ``dma_stm32`` programs ``head_block`` only, so there the chain is run in software
(one configuration and start per block from the thread); ``dma-emul`` on native_sim keeps each block in a
request slot, so ``dma-requests`` bounds it. How far a driver chains is a fact of the controller
(``DmaController.zephyr_blocks``), as is whether it reports progress (``zephyr_status``).

The operation is a ``dma_mem2mem`` (same buffers, controller and verification, so the placement and
buffer obligations treat it as one) that adds the chain, a bound on the wait after which the transfer is
aborted with ``dma_stop``, and optional ``dma_get_status`` polling of the pending byte count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import dt_labels, memory_to_memory_controllers
from rac_fw.domains.firmware.ops.dma import PRIORITY_FROM_CONTROLLER, zephyr_controller, zephyr_dma_node
from rac_fw.domains.firmware.ops.dma.dma_mem2mem import DmaMem2Mem
from rac_fw.domains.firmware.ops.dma.dma_mem2mem import _hal as _mem2mem_hal
from rac_fw.domains.firmware.ops.dma.dma_mem2mem import _names as _mem2mem_names
from rac_fw.domains.firmware.ops.events import attached
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import DmaController, Target
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan

#: Most blocks a plan may chain (each is a ``struct dma_block_config`` on the stack of the step).
MAX_BLOCKS = 64


class DmaScatter(DmaMem2Mem):
    """Copy ``src`` to ``dst`` by DMA as ``blocks`` equal blocks chained in one transfer, then verify.

    ``chain: hardware`` hands the driver one configuration whose blocks are linked by ``next_block``;
    ``software`` configures and starts one block at a time (for drivers that take ``head_block`` only).
    The wait for completion is bounded by ``timeout_ms`` (ms); past it the channel is aborted with
    ``dma_stop`` and the step fails with -ETIMEDOUT. ``status: true`` polls ``dma_get_status`` every
    millisecond while waiting and reports the last pending byte count. Publishes ``done`` in the thread
    once the last block has landed and the copy is verified.
    """

    op: Literal["dma_scatter"]  # type: ignore[assignment]
    blocks: int = Field(default=4, ge=2, le=MAX_BLOCKS, description="Equal blocks the copy is split into.")
    chain: Literal["hardware", "software"] = Field(
        default="hardware",
        description="hardware: one dma_config with a next_block chain; software: one dma_config per block.",
    )
    timeout_ms: int = Field(default=100, ge=1, le=60_000, description="Bound on the wait; then dma_stop (ms).")
    status: bool = Field(default=False, description="Poll dma_get_status (pending bytes) while waiting.")


def _controller(plan: Plan, target: Target, op: DmaScatter) -> DmaController | None:
    """The controller the copy runs on: the op's, else its buffers' ``dma``, else the first m2m-capable one
    (the choice the placement makes for a ``dma_mem2mem``)."""
    named = op.controller or next((b.dma for b in map(plan.buffer, (op.src, op.dst)) if b and b.dma), None)
    if named is None:
        return next((c for c in target.dma if c.memory_to_memory), None)
    return next((c for c in target.dma if named.lower() in (c.name.lower(), c.master.lower())), None)


def _divisors(size: int, near: int) -> list[int]:
    """Block counts from 2 to MAX_BLOCKS that split ``size`` bytes evenly, nearest ``near`` first."""
    fitting = [n for n in range(2, MAX_BLOCKS + 1) if size % n == 0]
    return sorted(fitting, key=lambda n: (abs(n - near), n))


def _check(plan: Plan, target: Target, framework: str, index: int, op: DmaScatter) -> list[Evidence]:
    """E_DMA_BLOCKS: the blocks must split the source evenly and, chained in hardware, fit the driver's
    chain; E_DMA_STATUS: status polling needs a driver that implements ``dma_get_status``."""

    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    found: list[Evidence] = []
    src = plan.buffer(op.src)
    if src is not None and src.size_bytes % (op.blocks * src.element_bytes):
        counts = _divisors(src.size_bytes // src.element_bytes, op.blocks)[:3]
        found.append(
            violation(
                "E_DMA_BLOCKS",
                f"{label}: {src.name} ({src.size_bytes} bytes of {src.element_bytes}-byte items) does not split "
                f"into {op.blocks} equal blocks",
                [*base, "blocks"],
                [label, src.name],
                [measure("size", src.size_bytes, "bytes"), measure("blocks", op.blocks, "count")],
                [relax(f"split it into {n} blocks", replace([*base, "blocks"], n)) for n in counts],
            )
        )
    controller = _controller(plan, target, op)
    if framework not in ("zephyr", "hal") or controller is None:
        return found
    if framework == "hal" and op.chain == "hardware":
        found.append(
            violation(
                "E_DMA_BLOCKS",
                f"{label} chains {op.blocks} blocks in hardware, but a HAL DMA stream takes one block per "
                "HAL_DMA_Start_IT: the HAL realization chains them from the transfer-complete callback",
                [*base, "chain"],
                [label, controller.name],
                [measure("blocks", op.blocks, "count"), measure("limit", 1, "count")],
                [relax("chain the blocks in software", replace([*base, "chain"], "software"))],
            )
        )
    if framework != "zephyr":
        return found
    if op.chain == "hardware" and op.blocks > controller.zephyr_blocks:
        fits = (
            [n for n in _divisors(src.size_bytes // src.element_bytes, 2) if n <= controller.zephyr_blocks]
            if src
            else []
        )
        options = [
            relax("chain the blocks in software (one dma_config per block)", replace([*base, "chain"], "software"))
        ]
        if fits:
            options.append(relax(f"chain {max(fits)} blocks", replace([*base, "blocks"], max(fits))))
        found.append(
            violation(
                "E_DMA_BLOCKS",
                f"{label} chains {op.blocks} blocks, but the Zephyr driver of {controller.name} takes "
                f"{controller.zephyr_blocks} dma_block_config per transfer",
                [*base, "chain"],
                [label, controller.name],
                [measure("blocks", op.blocks, "count"), measure("limit", controller.zephyr_blocks, "count")],
                options,
            )
        )
    if op.status and not controller.zephyr_status:
        found.append(
            violation(
                "E_DMA_STATUS",
                f"{label} polls dma_get_status, which the Zephyr driver of {controller.name} does not implement "
                "(it answers -ENOSYS)",
                [*base, "status"],
                [label, controller.name],
                relaxations=[relax("wait on the completion callback only", replace([*base, "status"], False))],
            )
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: DmaScatter) -> dict[str, Any]:
    b.app.includes.update({"zephyr/drivers/dma.h", "string.h", "zephyr/sys/atomic.h"})
    where = f"operations[{index}]"
    src, dst = b.dma_buffer(op.src, f"{where}.src"), b.dma_buffer(op.dst, f"{where}.dst")
    controller = b.dma_controller(index, op)
    zephyr_dma_node(b, controller)
    buffer = b.plan.buffer(op.src)
    element = buffer.element_bytes if buffer is not None else 1
    length = min(src["plan_size"], dst["plan_size"])
    facts = zephyr_controller(b.target, controller)
    return {
        "controller": controller,
        "src": src,
        "dst": dst,
        "length": length,
        "blocks": op.blocks,
        "block_bytes": length // op.blocks,
        "element": element,
        "hardware": op.chain == "hardware",
        "status": op.status and (facts is None or facts.zephyr_status),
        "timeout_ms": op.timeout_ms,
        "verify": op.verify,
        "reactions": attached(b, index),
        "setup": True,
        "step": {"period_ms": None},
    }


def _hal(b: HalBuild, index: int, op: DmaScatter) -> dict[str, Any]:
    """dma_mem2mem's HAL view (buffers, stream, console) plus the block split the callback walks."""
    view = _mem2mem_hal(b, index, op)
    view["blocks"] = op.blocks
    view["block_items"] = view["count"] // op.blocks
    view["block_bytes"] = view["block_items"] * view["src"]["element"]
    return view


SPEC = OpSpec(
    model=DmaScatter,
    family="dma",
    needs="dma",
    events=("done",),
    realizations={
        "zephyr": Realization(
            template="dma_scatter",
            view=_zephyr,
            available=lambda t: any(d.name.lower() in dt_labels(t) for d in memory_to_memory_controllers(t)),
            unrealized=PRIORITY_FROM_CONTROLLER,
        ),
        "hal": Realization(template="dma_scatter", view=_hal),
    },
    checks=(_mem2mem_names, _check),  # the copy's buffers and controller, named as a dma_mem2mem's
    codes=("E_DMA_BLOCKS", "E_DMA_STATUS", "E_UNKNOWN_RESOURCE"),
)
