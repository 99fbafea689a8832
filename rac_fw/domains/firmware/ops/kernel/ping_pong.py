"""The ``ping_pong`` operation: a double buffer an ISR fills and a thread drains, half by half.

The ISR owns one half and writes a sample per event into it; when the half is full it hands it over
(an atomic ownership flag, then a semaphore give, both callable from an ISR) and carries on in the other
half. The thread processes the half it was handed and gives it back by clearing the flag. The flag
is an atomic read-modify-write (Zephyr ``atomic_cas``/``atomic_clear``, C11 ``atomic_compare_exchange_strong``
and release/acquire stores on ESP-IDF), so the buffer writes of one side are visible to the other
before the half changes hands: no lock, no copy, and no torn half. If the thread still holds its half
when the ISR's half is full, the ISR refills its own half and counts an overrun instead of writing
into the half being read.

Obligations of its own: the source raises its event in an ISR and the ISR side runs there
(E_REACTION_CONTEXT); the consumer is a declared thread (E_UNKNOWN_RESOURCE); and, for a periodic
source, the consumer's stated processing time fits in the time the ISR takes to fill the other half
(E_PINGPONG_OVERRUN, in ms, answered with a larger half). The two halves count in the RAM budget.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import Reaction, check_source, raised_in_isr
from rac_fw.domains.firmware.ops.kernel import Timeout, timeout_expr, unknown_threads
from rac_fw.domains.firmware.ops.timer import TimedOperation
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: Bytes of one sample (the event's 32-bit sequence number).
SAMPLE_BYTES = 4
OVERRUN = "E_PINGPONG_OVERRUN"


class PingPong(Reaction):
    """On each ``event`` of the ISR-context ``source``, write one sample into the half of a double buffer
    the ISR owns; every ``half_items`` samples the halves swap and ``consumer`` processes the full one.

    The consumer waits for a half at most ``wait_timeout_ms`` (ms, or ``forever``: the plan says which)
    and checks the half holds consecutive samples. ``process_ms`` is the longest the consumer may take per
    half: with a periodic source it must stay below the time the ISR needs to fill the other half
    (E_PINGPONG_OVERRUN). The value is the number of halves processed; overruns (the thread still held
    its half) are counted apart. The two halves (2 × ``half_items`` × 4 bytes) are static RAM.
    """

    op: Literal["ping_pong"]
    consumer: Name = Field(description="Thread that processes full halves (resources.threads).")
    half_items: int = Field(ge=1, le=4096, description="Samples per half.")
    process_ms: int | None = Field(
        default=None, ge=0, le=3_600_000, description="Longest processing time of one half (ms); None = unstated."
    )
    wait_timeout_ms: Timeout


def _period_ms(plan: Plan, op: PingPong) -> float | None:
    """The source's event period in ms when it is a periodic timer, else None (an edge has no period)."""
    source = plan.operation(op.source)
    return source.period_s * 1000 if isinstance(source, TimedOperation) and not source.oneshot else None


def _check(plan: Plan, target: Target, framework: str, index: int, op: PingPong) -> list[Evidence]:
    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    found = unknown_threads(plan, framework, [(op.consumer, [*base, "consumer"])])
    source = plan.operation(op.source)
    if source is not None and not raised_in_isr(plan, op):
        found.append(
            violation(
                "E_REACTION_CONTEXT",
                f"{label} is a double buffer between an ISR and a thread, but {op.source} raises {op.event} "
                "in a thread (hand data between threads with a msg_queue)",
                [*base, "source"],
                [label, op.source],
                relaxations=[
                    relax(
                        f"fill it from {o.name}'s {e}", replace([*base, "source"], o.name), replace([*base, "event"], e)
                    )
                    for o in plan.operations
                    if o.name and o is not source and (e := _isr_event(o)) is not None
                ],
            )
        )
    elif op.context == "deferred":
        found.append(
            violation(
                "E_REACTION_CONTEXT",
                f"{label} fills its buffer in {op.source}'s interrupt handler; it cannot be deferred",
                [*base, "context"],
                [label, op.source],
                relaxations=[relax("fill it in the ISR", replace([*base, "context"], "auto"))],
            )
        )
    period = _period_ms(plan, op)
    if period is not None and op.process_ms is not None and op.process_ms >= op.half_items * period:
        fill = op.half_items * period
        half = math.floor(op.process_ms / period) + 1
        options = [relax(f"{half} samples per half", replace([*base, "half_items"], half))] if half <= 4096 else []
        found.append(
            violation(
                OVERRUN,
                f"{label}: {op.consumer} may take {op.process_ms} ms per half, but {op.source} fills the other "
                f"half in {fill:g} ms ({op.half_items} × {period:g} ms): the ISR would find no free half",
                [*base, "half_items"],
                [label, op.consumer, op.source],
                [measure("process", op.process_ms, "ms"), measure("fill", fill, "ms")],
                options,
            )
        )
    return found


def _isr_event(op: Any) -> str | None:
    from rac_fw.domains.firmware.plan.registry import spec

    published = spec(op.op)
    return next(iter(published.events), None) if published.has(Flag.ISR_CONTEXT) else None


def _storage(op: PingPong) -> tuple[int, str]:
    return 2 * op.half_items * SAMPLE_BYTES, "half_items"


def _smaller(op: PingPong, excess: int) -> int | None:
    keep = op.half_items - -(-excess // (2 * SAMPLE_BYTES))
    return keep if keep >= 1 else None


def _zephyr(b: ZephyrBuilder, index: int, op: PingPong) -> dict[str, Any]:
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "source": op.source,
        "event": op.event,
        "placement": "isr",
        "half": op.half_items,
        "timeout": timeout_expr(op.wait_timeout_ms),
        "forever": op.wait_timeout_ms == "forever",
    }
    b.name_view(view, index)
    view["thread_parts"] = [(op.consumer, b.thread_part("kernel", "ping_pong", view))]
    return view


def _espidf(b: EspIdfBuild, index: int, op: PingPong) -> dict[str, Any]:
    timeout = op.wait_timeout_ms
    return {
        "placement": "isr",
        "half": op.half_items,
        "ticks": "portMAX_DELAY" if timeout == "forever" else ("0" if timeout == 0 else f"pdMS_TO_TICKS({timeout})"),
        "forever": timeout == "forever",
        "consumer": b.thread(op.consumer, f"{op.consumer}_{b.symbol(index, op)}"),
    }


SPEC = OpSpec(
    model=PingPong,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr),
        "espidf": Realization(template="kernel", view=_espidf),
    },
    checks=(check_source, _check),
    codes=(OVERRUN, "E_REACTION_CONTEXT", "E_REACTION_EVENT", "E_UNKNOWN_RESOURCE"),
    ram=_storage,
    ram_relief=_smaller,
)
