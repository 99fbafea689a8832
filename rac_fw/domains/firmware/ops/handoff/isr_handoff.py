"""The ``isr_handoff`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.handoff import RING_POLL_MS
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_format, c_string
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class IsrHandoff(Operation):
    """Pass each event of the ISR-context operation ``source`` to ``thread``.

    msgq: a bounded message queue of ``depth`` items of ``item_bytes``; semaphore: a counting
    semaphore (no payload); ring_atomic: a lock-free single-producer/single-consumer ring with atomic
    indices. The ISR side never waits: ``put_timeout_ms`` must be 0 (E_ISR_BLOCKING otherwise).
    """

    op: Literal["isr_handoff"]
    source: Name = Field(
        description="Name of the interrupt-context operation (gpio_input_irq, uart_rx_irq, timer_*, dma_*)."
    )
    mechanism: Literal["msgq", "semaphore", "ring_atomic"]
    thread: Name = Field(description="Receiving thread (resources.threads).")
    depth: int = Field(default=8, ge=1, le=256, description="Queue/ring capacity in items.")
    item_bytes: int = Field(
        default=4, ge=1, le=64, description="Bytes per queued item (msgq, ring_atomic; a semaphore has none)."
    )
    put_timeout_ms: int = Field(
        default=0, ge=0, le=10_000, description="How long the ISR may wait for room: must be 0."
    )


def _zephyr(b: ZephyrBuilder, index: int, op: IsrHandoff) -> dict[str, Any]:

    b.app.includes.update({"zephyr/sys/atomic.h", "string.h"})
    kind = b.source_kind(op.source)
    source_id = b.op_id(op.source) or op.source
    view: dict[str, Any] = {
        "id": b.ids[index],
        "mechanism": op.mechanism,
        "depth": op.depth,
        "item_bytes": op.item_bytes,
        "align": 4 if op.item_bytes % 4 == 0 else 1,
        "source": source_id,
        "source_kind": kind,
        "source_message": c_format(f"{op.source}: event ") + ' "%u\\n"',
        "poll_ms": RING_POLL_MS,
    }
    source_op = b.plan.operation(op.source)
    view["echo"] = bool(getattr(source_op, "echo", False))
    view["thread_parts"] = [(op.thread, b.thread_part("handoff", "isr_handoff", view))]
    return view


def _espidf(b: EspIdfBuild, index: int, op: IsrHandoff) -> dict[str, Any]:
    source = b.plan.operation(op.source)
    # The UART driver owns its ISR (its reader task hands off in task context): only true ISR sources post FromISR.
    from_isr = source is not None and spec(source.op).has(Flag.ISR_CONTEXT) and not spec(source.op).has(Flag.RX_RING)
    return {"from_isr": from_isr, "task": b.thread(op.thread, f"{op.thread}_{b.symbol(index, op)}"),
            "source_label": c_string(op.source)}  # fmt: skip


def _put_never_blocks(plan: Plan, target: Target, framework: str, index: int, op: IsrHandoff) -> list[Evidence]:
    """E_ISR_BLOCKING: the put runs in interrupt context, and nothing there may wait."""
    if op.put_timeout_ms <= 0:
        return []
    path: Path = ["operations", index, "put_timeout_ms"]
    return [
        violation(
            "E_ISR_BLOCKING",
            f"the {op.mechanism} put in {op.source}'s ISR would wait up to "
            f"{op.put_timeout_ms} ms; an ISR must never block (drop or count the event when full)",
            path,
            [op.source, op.thread],
            [measure("wait", op.put_timeout_ms, "ms")],
            [relax("put without waiting (K_NO_WAIT / 0 ticks)", replace(path, 0))],
        )
    ]

def _payload(plan: Plan, target: Target, framework: str, index: int, op: IsrHandoff) -> list[Evidence]:
    """E_HANDOFF_PAYLOAD: a semaphore carries no payload, so an ``item_bytes`` the plan sets would do nothing."""
    if op.mechanism != "semaphore" or op.item_bytes == IsrHandoff.model_fields["item_bytes"].default:
        return []
    path: Path = ["operations", index, "item_bytes"]
    return [
        violation(
            PAYLOAD,
            f"a semaphore hands {op.thread} a count, not {op.item_bytes}-byte items: item_bytes applies to msgq and "
            "ring_atomic",
            path,
            [op.name or op.source, "item_bytes"],
            [measure("item", op.item_bytes, "bytes")],
            [
                relax("drop item_bytes", remove(path)),
                relax("pass items through a msgq", replace(["operations", index, "mechanism"], "msgq")),
            ],
        )
    ]


PAYLOAD = "E_HANDOFF_PAYLOAD"


def _names(plan: Plan, target: Target, framework: str, index: int, op: IsrHandoff) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: ``source`` names an interrupt-context operation, ``thread`` a declared thread."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists
    from rac_fw.domains.firmware.plan.model import ISR_OPERATIONS

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    refs.operation(op.source, [*base, "source"], ISR_OPERATIONS, "an interrupt-context")
    refs.thread(op.thread, [*base, "thread"])
    return refs.found

SPEC = OpSpec(
    model=IsrHandoff,
    family="handoff",
    flags=frozenset({Flag.HANDOFF}),
    realizations={
        "zephyr": Realization(template="handoff", view=_zephyr),
        "espidf": Realization(template="handoff", view=_espidf),
    },
    checks=(_put_never_blocks, _payload, _names),
    codes=("E_ISR_BLOCKING", PAYLOAD, "E_UNKNOWN_RESOURCE"),
)
