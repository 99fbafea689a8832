"""The ``timer_oneshot`` operation: its model and its spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rac_fw.domains.firmware.ops.timer import TimedOperation
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


class TimerOneshot(TimedOperation):
    """Run a callback once, one period after start (interrupt context)."""

    op: Literal["timer_oneshot"]


def _zephyr(b: ZephyrBuilder, index: int, op: TimerOneshot) -> dict[str, Any]:
    return b.timer_view(index, op, periodic=False)


def _espidf(b: EspIdfBuild, index: int, op: TimerOneshot) -> dict[str, Any]:
    return {"alarm_us": max(1, round(op.period_s * 1_000_000)), "reload": False}


def _hal(b: HalBuild, index: int, op: TimerOneshot) -> dict[str, Any]:
    view = b.base_view(index, op)
    b.timer_view(view, op, True, f"operations[{index}]")
    return view


def _baremetal(b: BaremetalBuild, index: int, op: TimerOneshot) -> None:
    target = b.target
    period_us = op.period_ms * 1000 if op.period_ms is not None else int(op.period_us or 0)
    # The self-test awaits three periods (one for a one-shot) when that takes at most b.SELF_TEST_US;
    # a longer timer is only reported as armed, so the test sequence stays short.
    wanted = 1 if True else 3
    count = wanted if period_us * wanted <= b.SELF_TEST_US else (1 if period_us <= b.SELF_TEST_US else 0)
    ctx = b.base(index, op) | {
        "source": op.source,
        "period_us": period_us,
        "oneshot": True,
        "count": count,
        # Bounded wait: the awaited periods plus half a period and a millisecond, at the core clock.
        "budget": b.budget_us(period_us * max(count, 1) + period_us // 2 + 1000),
    }
    if op.source == "systick":
        if period_us % 1000:
            raise b.error(f"a systick timer runs on the 1 ms time base; {period_us} us is not a whole number of ms")
        ctx.update(kind="systick", period_ms=period_us // 1000)
    elif op.source == "kernel":
        raise b.error("baremetal has no kernel timer; use systick or a timer instance")
    else:
        instance = op.source
        if instance in b.claimed:
            raise b.error(f"{instance} is already used by {b.claimed[instance]}")
        b.claimed[instance] = ctx["label"]
        regs = b.regs(instance)
        facts = b.derive.chip_extra(target, "timers").get(instance)
        if not isinstance(facts, dict):
            raise b.error(f"{target.id}: no timer facts for {instance} (extra.timers)")
        irq, handler = b.irq(instance)
        ctx.update(
            inst=instance,
            m=regs.m,
            irq=irq,
            handler=handler,
            priority=b.priority(op.irq_priority),
            clock=facts["clock"],
        )
        hz = b.derive.clock_hz(target, str(facts["clock"]))
        if regs.has("PSC", "ARR"):
            ctx.update(
                kind="stm32_tim",
                gate=b.derive.clock_gate(target, instance),
                setting=b.derive.stm32_timer(hz, period_us / 1e6, int(facts["bits"])),
            )
        elif b.group(instance) == "TIMER":
            setting = b.derive.nrf_timer(hz, period_us / 1e6, int(facts["bits"]), facts.get("prescalers", (1,)))
            ctx.update(kind="nrf_timer", setting=setting)
        else:
            raise b.error(f"{instance}: no timer register layout the baremetal templates know")
    b.emit("ops/timer", ctx)


SPEC = OpSpec(
    model=TimerOneshot,
    family="timer",
    flags=frozenset({Flag.ISR_CONTEXT}),
    realizations={
        "zephyr": Realization(template="timer", view=_zephyr),
        "espidf": Realization(template="timer", view=_espidf),
        "hal": Realization(template="ops", view=_hal),
        "baremetal": Realization(template="ops/timer", view=_baremetal),
    },
)
