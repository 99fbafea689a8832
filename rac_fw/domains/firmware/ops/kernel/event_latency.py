"""The ``event_latency`` operation: cycle-counter timing of an event's way from its ISR to a thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import Reaction, check_source, raised_in_isr
from rac_fw.domains.firmware.plan.escape import c_format
from rac_fw.domains.firmware.plan.evidence import relax, replace, violation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan


class EventLatency(Reaction):
    """Measure, with the hardware cycle counter, how long each ``event`` of the ISR-context ``source``
    takes to reach a work-queue thread; report min/max (ns) every ``report_ms`` and count the samples
    over ``deadline_us``.

    The ISR stamps ``k_cycle_get_32()``; the deferred handler takes the difference (wrap-safe modulo
    2^32 cycles) and keeps min/max with atomics. ``source`` must raise its event in an ISR
    (E_REACTION_CONTEXT otherwise); ``context`` is always deferred. The value is the latest maximum (ns).
    """

    op: Literal["event_latency"]
    deadline_us: int | None = Field(default=None, ge=1, le=10_000_000, description="Latency budget; None = none.")
    report_ms: int = Field(default=1000, ge=10, le=3_600_000, description="How often min/max are printed.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: EventLatency) -> list[Evidence]:
    """E_REACTION_CONTEXT: the measured path starts in an ISR; a thread-context event or a plan asking
    ``context: isr`` (nothing would be deferred, nothing measured) cannot be timed this way."""
    source = plan.operation(op.source)
    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    if source is not None and not raised_in_isr(plan, op):
        fitting = [(o.name, e) for o in plan.operations if o.name and (e := _isr_event(plan, o.name))]
        return [
            violation(
                "E_REACTION_CONTEXT",
                f"{label} times the way from an ISR to a thread, but {op.source} raises {op.event} in a thread",
                [*base, "source"],
                [label, op.source],
                relaxations=[
                    relax(f"time {n}'s {e}", replace([*base, "source"], n), replace([*base, "event"], e))
                    for n, e in fitting
                ],
            )
        ]
    if op.context == "isr":
        return [
            violation(
                "E_REACTION_CONTEXT",
                f"{label} measures the deferral out of the ISR; it cannot run in the ISR itself",
                [*base, "context"],
                [label, op.source],
                relaxations=[relax("defer it (the measured path)", replace([*base, "context"], "deferred"))],
            )
        ]
    return []


def _isr_event(plan: Plan, name: str) -> str | None:
    """The first event of the operation ``name`` when it raises its events in an ISR."""
    from rac_fw.domains.firmware.plan.registry import spec

    found = plan.operation(name)
    if found is None or not spec(found.op).has(Flag.ISR_CONTEXT):
        return None
    return next(iter(spec(found.op).events), None)


def _zephyr(b: ZephyrBuilder, index: int, op: EventLatency) -> dict[str, Any]:
    b.app.includes.update({"zephyr/sys/atomic.h", "zephyr/sys/time_units.h"})
    oid = b.ids[index]
    return {
        "id": oid,
        "source": op.source,
        "event": op.event,
        "placement": "work",
        "deadline_ns": op.deadline_us * 1000 if op.deadline_us is not None else None,
        "report": c_format(f"{op.name or oid}: latency")
        + ' " min=%u ns max=%u ns samples=%ld'
        + (" over_deadline=%ld" if op.deadline_us is not None else "")
        + '\\n"',
        "step": {"period_ms": op.report_ms},
    }


SPEC = OpSpec(
    model=EventLatency,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={"zephyr": Realization(template="kernel", view=_zephyr)},
    checks=(check_source, _check),
    codes=("E_REACTION_CONTEXT", "E_REACTION_EVENT", "E_UNKNOWN_RESOURCE"),
)
