"""Timer operations: periodic callback and one-shot, on the kernel timer, SysTick or a hardware timer.

The two differ only in whether the timer reloads, so their model base and their realizations live here and
each op module declares its model and ``SPEC`` with :func:`realizations`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.domains.firmware.ops.events import attached, reaction_symbols
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import IrqPriority, PeripheralName
from rac_fw.domains.firmware.plan.rules import ExactlyOne, Rule
from rac_fw.domains.firmware.plan.spec import Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

TimerSource = Annotated[
    Literal["kernel", "systick"] | PeripheralName,
    Field(
        description="kernel: the framework's software timer (k_timer, esp_timer); systick: the Cortex-M "
        "SysTick (bare metal); or a hardware timer instance such as TIM2 / TIMER1 / TIMG0."
    ),
]


class TimedOperation(Operation):
    period_ms: int | None = Field(default=None, ge=1, le=86_400_000)
    period_us: int | None = Field(default=None, ge=1, le=4_000_000_000)
    source: TimerSource = "kernel"
    irq_priority: IrqPriority | None = None

    rules: ClassVar[tuple[Rule, ...]] = (
        ExactlyOne("give exactly one of period_ms or period_us", ("period_ms", "period_us")),
    )

    @property
    def period_s(self) -> float:
        """The period in seconds, whichever unit the plan used."""
        return self.period_ms / 1e3 if self.period_ms is not None else (self.period_us or 0) / 1e6

    @property
    def oneshot(self) -> bool:
        """The timer fires once (``timer_oneshot``) instead of reloading."""
        return self.op == "timer_oneshot"

    @property
    def espidf_service(self) -> str:
        """The ESP-IDF service that times this operation: the kernel timer is ``esp_timer`` (ISR dispatch, so
        the callback keeps ISR context); a named TIMG instance is a ``gptimer``. A property of the operation, so
        the behaviour's ESP-IDF rules ask the operation they hold without importing the op package."""
        return "esp_timer" if self.source == "kernel" else "gptimer"


def _zephyr(b: ZephyrBuilder, index: int, op: TimedOperation) -> dict[str, Any]:
    return b.timer_view(index, op, periodic=not op.oneshot) | {"reactions": attached(b, index),
                                                                "hooks": b.hooks(index, "expiry")}


def _espidf(b: EspIdfBuild, index: int, op: TimedOperation) -> dict[str, Any]:
    service = op.espidf_service
    if service == "esp_timer":
        b.sdkconfig["CONFIG_ESP_TIMER_SUPPORTS_ISR_DISPATCH_METHOD"] = "y"
    return {"alarm_us": max(1, round(op.period_s * 1_000_000)), "reload": not op.oneshot, "service": service,
            "reactions": reaction_symbols(b, index), "hooks": b.hooks(index, "expiry")}  # fmt: skip


def _hal(b: HalBuild, index: int, op: TimedOperation) -> dict[str, Any]:
    view = b.base_view(index, op)
    if op.source == "kernel" and b.rtos is not None:
        # In an RTOS application the framework's software timer is a CMSIS-RTOS2 osTimer.
        b.os_timer_view(view, op)
    else:
        b.timer_view(view, op, op.oneshot, f"operations[{index}]")
    view["hooks"] = b.hooks(index, "expiry")
    return view


def _baremetal(b: BaremetalBuild, index: int, op: TimedOperation) -> None:
    target = b.target
    period_us = op.period_ms * 1000 if op.period_ms is not None else int(op.period_us or 0)
    # The self-test awaits three periods (one for a one-shot) when that takes at most b.SELF_TEST_US;
    # a longer timer is only reported as armed, so the test sequence stays short.
    wanted = 1 if op.oneshot else 3
    count = wanted if period_us * wanted <= b.SELF_TEST_US else (1 if period_us <= b.SELF_TEST_US else 0)
    ctx = b.base(index, op) | {
        "source": op.source,
        "period_us": period_us,
        "oneshot": op.oneshot,
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
        facts = target.timers.get(instance)
        if facts is None or facts.clock is None:
            raise b.error(f"{target.id}: no timer facts for {instance} (timers)")
        irq, handler = b.irq(instance)
        ctx.update(
            inst=instance,
            m=regs.m,
            irq=irq,
            handler=handler,
            priority=b.priority(op.irq_priority),
            clock=facts.clock,
        )
        hz = b.derive.clock_hz(b.clocks, facts.clock)
        if regs.has("PSC", "ARR"):
            ctx.update(
                kind="stm32_tim",
                gate=b.derive.clock_gate(target, instance),
                setting=b.derive.stm32_timer(hz, period_us / 1e6, facts.bits),
            )
        elif b.group(instance) == "TIMER":
            setting = b.derive.nrf_timer(hz, period_us / 1e6, facts.bits, facts.prescalers or (1,))
            ctx.update(kind="nrf_timer", setting=setting)
        else:
            raise b.error(f"{instance}: no timer register layout the baremetal templates know")
    b.emit("ops/timer", ctx)


def realizations() -> dict[str, Realization]:
    """How each framework realizes a timer operation (the kind decides reload vs one-shot)."""
    return {
        "zephyr": Realization(template="timer", view=_zephyr, quiet=True, behaviour=frozenset({"event:expiry"})),
        "espidf": Realization(template="timer", view=_espidf, quiet=True, behaviour=frozenset({"event:expiry"})),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=frozenset({"event:expiry"})),
        "baremetal": Realization(template="ops/timer", view=_baremetal),
    }


def period_range(plan: Plan, target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_TIMER_RANGE: the period must be one the ``source`` counter produces within 1 %; asks the shared
    timing concern (``obligations.timing``), imported here when it runs: the obligations package imports
    the plan model, which collects this spec."""
    from rac_fw.domains.firmware.obligations.timing import timer_period

    return timer_period(plan, target, framework, index, op)


def source_named(plan: Plan, target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_NO_PERIPHERAL: a hardware ``source`` must be a timer of the chip (the peripherals concern's rule)."""
    from rac_fw.domains.firmware.obligations.peripherals import timer_named  # runs after the plan model exists

    return timer_named(target, index, op)


def source_available(plan: Plan, target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_TARGET_UNSUPPORTED: the ``source`` must exist under the framework (a kernel timer service, SysTick
    the framework does not own, hardware timers it drives): the support concern's rule."""
    from rac_fw.domains.firmware.obligations.support import timer_source  # runs after the plan model exists

    return timer_source(target, framework, index, op)
