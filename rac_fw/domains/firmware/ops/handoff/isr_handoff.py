"""The ``isr_handoff`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import Flag, OpSpec, Realization
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


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
    item_bytes: int = Field(default=4, ge=1, le=64, description="Payload per event (msgq, ring_atomic).")
    put_timeout_ms: int = Field(
        default=0, ge=0, le=10_000, description="How long the ISR may wait for room: must be 0."
    )


SPEC = OpSpec(
    model=IsrHandoff,
    family="handoff",
    flags=frozenset({Flag.HANDOFF}),
    realizations={
        "zephyr": Realization(template="handoff"),
        "espidf": Realization(template="handoff"),
    },
)
