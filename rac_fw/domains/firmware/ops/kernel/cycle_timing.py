"""The ``cycle_timing`` operation: time a section with the core's cycle counter and report min/max.

Zephyr uses its timing API (include/zephyr/timing/timing.h @1714a88861db: timing_init, timing_start,
timing_counter_get, timing_cycles_get, timing_cycles_to_ns, timing_stop; CONFIG_TIMING_FUNCTIONS), which
reads the same DWT counter on Cortex-M. Bare metal reads the counter the core facts describe
(``facts/timing.py``: DWT CYCCNT on Cortex-M3/M4/M7, none on ARMv6-M or non-Arm cores, where neither
realization is offered). The section is a calibrated
busy loop of ``iterations`` volatile turns (0: the cost of reading the counter itself, what a
measurement subtracts). Obligation of its own: a 32-bit counter wraps every 2^32 cycles — 268 s at
the F407's 16 MHz reset clock, 67 s at 64 MHz, 8.9 s at 480 MHz — so a deadline at or beyond one wrap
cannot be judged from two readings (E_CYCLE_COUNTER_WRAP, in µs at the core clock the facts give,
answered with the longest deadline that fits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.timing import cycle_counter
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

WRAP = "E_CYCLE_COUNTER_WRAP"


class CycleTiming(Operation):
    """Time a busy loop of ``iterations`` turns ``samples`` times with the core's cycle counter and report
    the minimum and maximum in cycles and ns (at the core clock of the facts).

    ``deadline_us`` (optional) counts the samples slower than it; it must stay below one wrap of the
    32-bit counter at the core clock (E_CYCLE_COUNTER_WRAP). A counter that does not advance (no cycle
    counter, or an emulator that does not model it) is reported as a failure, never as a time.
    """

    op: Literal["cycle_timing"]
    iterations: int = Field(default=100, ge=0, le=1_000_000, description="Turns of the timed busy loop.")
    samples: int = Field(default=16, ge=1, le=100_000, description="How many times the section is timed.")
    deadline_us: int | None = Field(default=None, ge=1, le=600_000_000, description="Budget per sample, µs.")


def _check(plan: Plan, target: Target, framework: str, index: int, op: CycleTiming) -> list[Evidence]:
    counter = cycle_counter(target)
    hz = plan_clocks(plan, target, framework).core_hz()  # a core_clock request moves the wrap
    if op.deadline_us is None or counter is None or hz is None:
        return []
    wrap_us = (1 << counter.bits) * 1_000_000 / hz
    if op.deadline_us < wrap_us:
        return []
    base: list[str | int] = ["operations", index]
    label = op.name or f"operations[{index}]"
    longest = int(wrap_us) - 1
    return [
        violation(
            WRAP,
            f"{label}: the {counter.bits}-bit {counter.unit} cycle counter wraps every {wrap_us:,.0f} µs at "
            f"{hz / 1e6:g} MHz; a {op.deadline_us} µs deadline cannot be judged from two readings",
            [*base, "deadline_us"],
            [label, counter.unit],
            [measure("deadline", op.deadline_us, "us"), measure("wrap", round(wrap_us), "us")],
            [relax(f"judge a {longest} µs deadline", replace([*base, "deadline_us"], longest))],
        )
    ]


def _baremetal(b: BaremetalBuild, index: int, op: CycleTiming) -> None:
    counter = cycle_counter(b.target)
    if counter is None:
        raise b.error(f"{b.target.id}'s core has no cycle counter")
    deadline = None if op.deadline_us is None else op.deadline_us * b.core_hz // 1_000_000
    ctx = b.base(index, op) | {
        "cc": counter,
        "core_hz": b.core_hz,
        "iterations": op.iterations,
        "samples": op.samples,
        "deadline_cycles": deadline,
    }
    b.emit("ops/cycle_timing", ctx)


def _zephyr(b: ZephyrBuilder, index: int, op: CycleTiming) -> dict[str, Any]:
    b.app.includes.add("zephyr/timing/timing.h")
    b.app.need("kernel", "CONFIG_TIMING_FUNCTIONS")
    return {
        "iterations": op.iterations,
        "samples": op.samples,
        "deadline_ns": None if op.deadline_us is None else op.deadline_us * 1000,
        "step": {"period_ms": None},
    }


def _has_counter(target: Target) -> bool:
    return cycle_counter(target) is not None


SPEC = OpSpec(
    model=CycleTiming,
    family="kernel",
    realizations={
        "zephyr": Realization(template="kernel", view=_zephyr, available=_has_counter),
        "baremetal": Realization(template="ops/cycle_timing", view=_baremetal, available=_has_counter),
    },
    checks=(_check,),
    codes=(WRAP,),
)
