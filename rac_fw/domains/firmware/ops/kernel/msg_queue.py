"""The ``msg_queue`` operation: fixed-size messages from a producer thread to a consumer thread, FIFO or LIFO.

Zephyr: ``fifo`` is a ``k_msgq`` (messages copied into its ring, the idiom of samples/synchronization
and the kernel docs' message-queue example); ``lifo`` is a ``k_lifo`` whose items come from a
``k_mem_slab`` pool of ``depth`` items (a LIFO queues pointers: each item's first word is reserved for
the kernel, the producer allocates it with the put timeout and the consumer frees it). FreeRTOS (ESP-IDF):
one ``xQueueCreate(depth, item)`` queue, sent to the back (FIFO) or the front (LIFO).

Obligations of its own: producer and consumer are declared threads (E_UNKNOWN_RESOURCE) and distinct
(E_QUEUE_SAME_THREAD: a thread queueing to itself hands nothing over, and its receive wait delays
its own sends). The storage (``depth`` × message) counts in the RAM budget (``OpSpec.ram``): the
shared budget rule answers an excess with a smaller depth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.kernel import DECLARED_STACK_BYTES, Timeout, timeout_expr, unknown_threads
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.evidence import add, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: The sequence number every message starts with (a uint32_t), so the consumer can check the order.
SEQ_BYTES = 4
#: The word a Zephyr k_lifo item reserves for the kernel's link (``void *``; 4 bytes on the 32-bit targets).
LINK_BYTES = 4


class MsgQueue(Operation):
    """``producer`` sends a ``item_bytes``-byte message every ``period_ms``; ``consumer`` receives them.

    ``order`` fifo delivers the oldest first, lifo the newest first. Each message carries a sequence
    number; the consumer counts the messages it receives (this operation's value) and, for a FIFO, the
    ones that arrived out of order. ``put_timeout_ms`` bounds a send into a full queue (a failed send
    is counted as dropped), ``get_timeout_ms`` the wait of the consumer (ms, or ``forever``): the
    plan says which. ``depth`` × ``item_bytes`` is static RAM.
    """

    op: Literal["msg_queue"]
    producer: Name = Field(description="Thread that sends (resources.threads).")
    consumer: Name = Field(description="Thread that receives (resources.threads); not the producer.")
    order: Literal["fifo", "lifo"] = Field(default="fifo", description="Oldest first (fifo) or newest first.")
    depth: int = Field(ge=1, le=1024, description="Messages the queue holds.")
    item_bytes: int = Field(default=SEQ_BYTES, ge=SEQ_BYTES, le=1024, description="Bytes per message (>= 4).")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="How often the producer sends (ms).")
    put_timeout_ms: Timeout
    get_timeout_ms: Timeout


SAME_THREAD = "E_QUEUE_SAME_THREAD"


def _check(plan: Plan, target: Target, framework: str, index: int, op: MsgQueue) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE for an undeclared thread; E_QUEUE_SAME_THREAD when one thread plays both roles
    (relaxations: another declared thread consumes, or a new one is declared for it)."""
    base: list[str | int] = ["operations", index]
    found = unknown_threads(plan, framework, [(op.producer, [*base, "producer"]), (op.consumer, [*base, "consumer"])])
    if op.producer != op.consumer or plan.thread(op.producer) is None:
        return found
    label = op.name or f"operations[{index}]"
    others = [t.name for t in plan.resources.threads if t.name != op.producer]
    options = [relax(f"let {t} consume", replace([*base, "consumer"], t)) for t in others[:3]]
    new = f"{op.producer}_consumer"
    if plan.thread(new) is None:
        options.append(
            relax(
                f"declare thread {new} and let it consume",
                add(["resources", "threads", -1], {"name": new, "priority": 5, "stack_bytes": DECLARED_STACK_BYTES}),
                replace([*base, "consumer"], new),
            )
        )
    found.append(
        violation(
            SAME_THREAD,
            f"{label} hands messages between two threads, but {op.producer} would both send and receive: "
            "it hands nothing over, and its own receive wait delays its sends",
            [*base, "consumer"],
            [label, op.producer],
            relaxations=options,
        )
    )
    return found


def _storage(op: MsgQueue) -> tuple[int, str]:
    """Static RAM: the ring of ``depth`` messages (a LIFO's pool items carry the kernel's link word too)."""
    item = op.item_bytes + (LINK_BYTES if op.order == "lifo" else 0)
    return op.depth * item, "depth"


def _smaller_depth(op: MsgQueue, excess: int) -> int | None:
    item = _storage(op)[0] // op.depth
    keep = op.depth - -(-excess // item)
    return keep if keep >= 1 else None


def _zephyr(b: ZephyrBuilder, index: int, op: MsgQueue) -> dict[str, Any]:
    b.app.includes.update({"zephyr/sys/atomic.h", "string.h"})
    oid = b.ids[index]
    view: dict[str, Any] = {
        "id": oid,
        "order": op.order,
        "depth": op.depth,
        "item_bytes": op.item_bytes,
        "period_ms": op.period_ms,
        "put_timeout": timeout_expr(op.put_timeout_ms),
        "get_timeout": timeout_expr(op.get_timeout_ms),
        "get_forever": op.get_timeout_ms == "forever",
        "message": c_format(f"{op.name or oid}: receive failed ") + ' "(%d)\\n"',
    }
    view["thread_parts"] = [
        (op.producer, b.thread_part("kernel", "msg_queue_put", view)),
        (op.consumer, b.thread_part("kernel", "msg_queue_get", view)),
    ]
    return view


def _espidf(b: EspIdfBuild, index: int, op: MsgQueue) -> dict[str, Any]:
    sym = b.symbol(index, op)

    def ticks(timeout: int | str) -> str:
        return "portMAX_DELAY" if timeout == "forever" else ("0" if timeout == 0 else f"pdMS_TO_TICKS({timeout})")

    return {
        "order": op.order,
        "depth": op.depth,
        "item_bytes": op.item_bytes,
        "period_ms": op.period_ms,
        "send": "xQueueSendToBack" if op.order == "fifo" else "xQueueSendToFront",
        "put_ticks": ticks(op.put_timeout_ms),
        "get_ticks": ticks(op.get_timeout_ms),
        "get_forever": op.get_timeout_ms == "forever",
        "producer": b.thread(op.producer, f"{op.producer}_{sym}"),
        "consumer": b.thread(op.consumer, f"{op.consumer}_{sym}"),
    }


SPEC = OpSpec(
    model=MsgQueue,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr),
        "espidf": Realization(template="kernel", view=_espidf),
    },
    checks=(_check,),
    codes=(SAME_THREAD, "E_UNKNOWN_RESOURCE"),
    ram=_storage,
    ram_relief=_smaller_depth,
)
