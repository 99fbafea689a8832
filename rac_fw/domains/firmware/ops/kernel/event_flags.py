"""The ``event_flags`` operation: named event bits a thread waits for (k_event / FreeRTOS event group)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import hal_rtos
from rac_fw.domains.firmware.ops.kernel import Timeout, timeout_expr, unknown_threads
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: Event bits each framework's object carries: Zephyr's k_event tracks a uint32_t; a FreeRTOS event group
#: with 32-bit ticks (ESP-IDF's configuration) keeps 24 (the top byte holds its control bits).
EVENT_BITS = {"zephyr": 32, "espidf": 24}


class EventFlags(Operation):
    """``waiter`` waits for ``any`` or ``all`` of the named ``flags``; ``setter`` sets them every ``period_ms``.

    Each flag is one bit of a k_event (Zephyr) or event group (FreeRTOS); the wait lasts
    ``timeout_ms`` (ms) or ``forever``, and consumes the bits it returns. A waiter for all flags that no
    one sets waits in vain (E_EVENT_NEVER_SET); more flags than the object has bits is E_EVENT_BITS.
    The value is the number of completed waits.
    """

    op: Literal["event_flags"]
    flags: list[Name] = Field(min_length=1, max_length=32, description="Flag names, bit 0 first.")
    waiter: Name = Field(description="Waiting thread (resources.threads).")
    wait_for: Literal["any", "all"] = "all"
    timeout_ms: Timeout
    setter: Name | None = Field(default=None, description="Thread setting every flag each period; None = none.")
    period_ms: int = Field(default=100, ge=1, le=3_600_000, description="How often the setter sets the flags.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: EventFlags) -> list[Evidence]:

    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    uses = [(op.waiter, [*base, "waiter"])] + ([(op.setter, [*base, "setter"])] if op.setter else [])
    found = unknown_threads(plan, framework, uses)
    bits = EVENT_BITS.get(framework, 32)
    if len(op.flags) > bits:
        found.append(
            violation(
                "E_EVENT_BITS",
                f"{label} names {len(op.flags)} flags; a {framework} event object holds {bits}",
                [*base, "flags"],
                [label],
                [measure("flags", len(op.flags), "bits"), measure("limit", bits, "bits")],
                [relax(f"keep the first {bits} flags", replace([*base, "flags"], op.flags[:bits]))],
            )
        )
    if len(set(op.flags)) != len(op.flags):
        unique = list(dict.fromkeys(op.flags))
        found.append(
            violation(
                "E_EVENT_BITS",
                f"{label} names a flag twice",
                [*base, "flags"],
                [label],
                relaxations=[relax("name each flag once", replace([*base, "flags"], unique))],
            )
        )
    if op.setter is None:
        others = [t.name for t in plan.resources.threads if t.name != op.waiter]
        found.append(
            violation(
                "E_EVENT_NEVER_SET",
                f"nothing sets {label}'s flags ({', '.join(op.flags)}): {op.waiter} would wait "
                + ("forever" if op.timeout_ms == "forever" else f"{op.timeout_ms} ms at a time")
                + " for nothing",
                [*base, "setter"],
                [label, op.waiter],
                relaxations=[
                    relax(f"let {t} set them every {op.period_ms} ms", replace([*base, "setter"], t)) for t in others
                ],
            )
        )
    return found


def _mask(op: EventFlags) -> str:
    return f"0x{(1 << len(op.flags)) - 1:X}U"


def _zephyr(b: ZephyrBuilder, index: int, op: EventFlags) -> dict[str, Any]:
    b.app.need("kernel", "CONFIG_EVENTS")
    b.app.includes.add("zephyr/sys/atomic.h")
    view: dict[str, Any] = {
        "id": b.ids[index],
        "flags": op.flags,
        "mask": _mask(op),
        "wait": "k_event_wait_all" if op.wait_for == "all" else "k_event_wait",
        "wait_for": op.wait_for,
        "timeout": timeout_expr(op.timeout_ms),
        "period_ms": op.period_ms,
        "setter": op.setter,
    }
    view["thread_parts"] = [(op.waiter, b.thread_part("kernel", "event_flags_wait", view))]
    if op.setter is not None:
        view["thread_parts"].append((op.setter, b.thread_part("kernel", "event_flags_set", view)))
    return view


def _espidf(b: EspIdfBuild, index: int, op: EventFlags) -> dict[str, Any]:
    sym = b.symbol(index, op)
    timeout = op.timeout_ms
    return {
        "flags": op.flags,
        "mask": _mask(op),
        "all": "pdTRUE" if op.wait_for == "all" else "pdFALSE",
        "wait_for": op.wait_for,
        "ticks": "portMAX_DELAY" if timeout == "forever" else f"pdMS_TO_TICKS({timeout})",
        "period_ms": op.period_ms,
        "waiter": b.thread(op.waiter, f"{op.waiter}_{sym}"),
        "setter": b.thread(op.setter, f"{op.setter}_{sym}") if op.setter is not None else None,
    }


def _hal(b: HalBuild, index: int, op: EventFlags) -> dict[str, Any]:
    view = b.base_view(index, op)
    where = f"operations[{index}]"
    b.kernel_object("event_group")
    view.update(
        flags=op.flags,
        mask=_mask(op),
        wait_for=op.wait_for,
        wait=b.wait(op.timeout_ms),
        options="osFlagsWaitAll" if op.wait_for == "all" else "osFlagsWaitAny",
        period=b.ticks(op.period_ms),
        waiter=b.thread(op.waiter, f"{op.waiter}_{view['sym']}", where),
        setter=b.thread(op.setter, f"{op.setter}_{view['sym']}", where) if op.setter is not None else None,
    )
    return view


SPEC = OpSpec(
    model=EventFlags,
    family="kernel",
    flags=frozenset({Flag.VALUE}),
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr),
        "espidf": Realization(template="kernel", view=_espidf),
        "hal": Realization(template="rtos", view=_hal, available=hal_rtos, quiet=True),
    },
    checks=(_check,),
    codes=("E_EVENT_BITS", "E_EVENT_NEVER_SET", "E_UNKNOWN_RESOURCE"),
)
