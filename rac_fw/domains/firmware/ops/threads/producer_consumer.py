"""The ``producer_consumer`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import hal_rtos
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


class ProducerConsumer(Operation):
    """``producer`` puts an item every ``period_ms`` into a bounded queue that ``consumer`` drains."""

    op: Literal["producer_consumer"]
    producer: Name = Field(description="Producing thread (resources.threads).")
    consumer: Name = Field(description="Consuming thread (resources.threads).")
    queue_depth: int = Field(ge=1, le=256, description="Queue capacity in items.")
    item_bytes: int = Field(ge=1, le=256, description="Size of one item.")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="Production period.")


def _zephyr(b: ZephyrBuilder, index: int, op: ProducerConsumer) -> dict[str, Any]:
    b.app.includes.update({"zephyr/sys/atomic.h", "string.h"})
    view: dict[str, Any] = {
        "id": b.ids[index],
        "depth": op.queue_depth,
        "item_bytes": op.item_bytes,
        "align": 4 if op.item_bytes % 4 == 0 else 1,
        "period_ms": op.period_ms,
    }
    view["thread_parts"] = [
        (op.producer, b.thread_part("threads", "producer", view)),
        (op.consumer, b.thread_part("threads", "consumer", view)),
    ]
    return view


def _espidf(b: EspIdfBuild, index: int, op: ProducerConsumer) -> dict[str, Any]:
    sym = b.symbol(index, op)
    return {"producer_task": b.thread(op.producer, f"{op.producer}_{sym}"),
            "consumer_task": b.thread(op.consumer, f"{op.consumer}_{sym}")}  # fmt: skip


def _hal(b: HalBuild, index: int, op: ProducerConsumer) -> dict[str, Any]:
    view = b.base_view(index, op)
    where = f"operations[{index}]"
    b.kernel_object("queue", op.queue_depth * op.item_bytes)
    view.update(
        depth=op.queue_depth,
        item_bytes=op.item_bytes,
        period=b.ticks(op.period_ms),
        producer=b.thread(op.producer, f"{op.producer}_{view['sym']}", where),
        consumer=b.thread(op.consumer, f"{op.consumer}_{view['sym']}", where),
    )
    return view


def _names(plan: Plan, target: Target, framework: str, index: int, op: ProducerConsumer) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: producer and consumer are declared threads."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    refs.thread(op.producer, [*base, "producer"])
    refs.thread(op.consumer, [*base, "consumer"])
    return refs.found

SPEC = OpSpec(
    model=ProducerConsumer,
    family="threads",
    flags=frozenset(),
    realizations={
        "zephyr": Realization(template="threads", view=_zephyr),
        "espidf": Realization(template="threads", view=_espidf),
        "hal": Realization(template="rtos", view=_hal, available=hal_rtos, quiet=True),
    },
    checks=(_names,),
    codes=("E_UNKNOWN_RESOURCE",),
)
