"""The ``producer_consumer`` operation: its model and its spec."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.spec import OpSpec, Realization
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


SPEC = OpSpec(
    model=ProducerConsumer,
    family="threads",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="threads"),
        "espidf": Realization(template="threads"),
    },
)
