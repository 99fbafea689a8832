"""Threading operations: bounded producer/consumer, mutex-protected shared state, fixed lock order."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name


class ProducerConsumer(Operation):
    """``producer`` puts an item every ``period_ms`` into a bounded queue that ``consumer`` drains."""

    op: Literal["producer_consumer"]
    producer: Name = Field(description="Producing thread (resources.threads).")
    consumer: Name = Field(description="Consuming thread (resources.threads).")
    queue_depth: int = Field(ge=1, le=256, description="Queue capacity in items.")
    item_bytes: int = Field(ge=1, le=256, description="Size of one item.")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="Production period.")


class SharedStateMutex(Operation):
    """``threads`` update a shared state of ``state_bytes`` under one mutex (priority inheritance)."""

    op: Literal["shared_state_mutex"]
    lock: Name = Field(description="Name of the mutex.")
    threads: list[Name] = Field(min_length=2, max_length=8, description="Threads sharing the state.")
    state_bytes: int = Field(default=4, ge=1, le=4096)
    priority_inheritance: bool = Field(
        default=True, description="Use a priority-inheriting mutex (Zephyr k_mutex, FreeRTOS mutex)."
    )


class LockOrder(Operation):
    """``threads`` each take ``locks`` in exactly this order (outermost first) and release in reverse.

    Two lock_order operations that name the same locks in different orders can deadlock
    (E_LOCK_ORDER).
    """

    op: Literal["lock_order"]
    locks: list[Name] = Field(min_length=2, max_length=4, description="Locks, outermost first.")
    threads: list[Name] = Field(min_length=1, max_length=8, description="Threads (resources.threads).")
