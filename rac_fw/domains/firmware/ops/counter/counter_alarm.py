"""The ``counter_alarm`` operation: alarms on a hardware counter's compare channel (Zephyr counter API).

Realized the way Zephyr's samples/drivers/counter/alarm does it: ``counter_start``, then
``counter_set_channel_alarm`` with a ``struct counter_alarm_cfg`` whose ``ticks`` come from
``counter_us_to_ticks``; the alarm callback runs in the counter's interrupt and re-arms the channel for the
next alarm (include/zephyr/drivers/counter.h: ``counter_alarm_callback_t`` is
``void (*)(const struct device *, uint8_t chan_id, uint32_t ticks, void *user_data)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import Clocks, dt_labels
from rac_fw.domains.firmware.ops.events import attached
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.evidence import measure, relax, replace, violation
from rac_fw.domains.firmware.plan.fields import FactName
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.chip import Timer
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


class CounterAlarm(Operation):
    """Fire ``alarms`` alarms ``delay_us`` apart on compare channel ``channel`` of a hardware counter.

    ``counter`` names a timer of the chip facts (RTC2, TIMER1, TIM2); None takes the first one the board's
    devicetree offers as a counter. The delay must be at least one counter tick and at most the counter's
    top value (E_COUNTER_RANGE); the channel must exist (E_COUNTER_CHANNEL). The alarm callback runs in
    the counter's interrupt and publishes ``expiry``; the operation's value is the number of alarms fired.
    """

    op: Literal["counter_alarm"]
    counter: FactName | None = Field(default=None, description="Timer instance (chip facts); None = first offered.")
    delay_us: int = Field(ge=1, le=3_600_000_000, description="Time from arming to each alarm (us).")
    alarms: int = Field(default=1, ge=1, le=1000, description="Alarms to fire; each re-arms the channel.")
    channel: int = Field(default=0, ge=0, le=7, description="Compare (alarm) channel of the counter.")


def offered(target: Target) -> dict[str, Timer]:
    """The timers a plan may use as Zephyr counters: a counter node, on a label the board has."""
    labels = dt_labels(target)
    return {
        name: t
        for name, t in target.timers.items()
        if t.zephyr_counter is not None and t.zephyr_counter.split("/")[0] in labels
    }


def _chosen(target: Target, op: CounterAlarm) -> tuple[str, Timer] | None:
    counters = offered(target)
    if op.counter is None:
        return next(iter(counters.items()), None)
    found = counters.get(op.counter.upper())
    return (op.counter.upper(), found) if found is not None else None


def _max_us(clocks: Clocks, timer: Timer) -> tuple[int, float] | None:
    """(tick rate in Hz, longest delay in us) of ``timer`` as a Zephyr counter at its clock as the plan runs it
    (None: clock unknown)."""
    hz = clocks.hz(timer.clock)
    if not hz:
        return None
    return hz, ((1 << min(timer.bits, 32)) - 1) * 1_000_000 / hz


def _check(plan: Plan, target: Target, framework: str, index: int, op: CounterAlarm) -> list[Evidence]:
    """E_NO_PERIPHERAL: the counter must be one the board offers; E_COUNTER_RANGE: the delay must be one
    tick or more and fit the counter's top value (``bits`` at its clock; the API's ticks are 32-bit);
    E_COUNTER_CHANNEL: the compare channel must exist."""

    if framework != "zephyr":
        return []
    base: Path = ["operations", index]
    label = op.name or f"operations[{index}]"
    counters = offered(target)
    chosen = _chosen(target, op)
    if chosen is None:
        return [
            violation(
                "E_NO_PERIPHERAL",
                f"{label}: {op.counter} is not a counter the {target.board.name} devicetree offers; offered: "
                f"{', '.join(counters) or 'none'}",
                [*base, "counter"],
                [str(op.counter), target.board.name],
                relaxations=[relax(f"use {n}", replace([*base, "counter"], n)) for n in list(counters)[:3]],
            )
        ]
    name, timer = chosen
    found: list[Evidence] = []
    clocks = plan_clocks(plan, target, framework)
    span = _max_us(clocks, timer)
    if span is not None:
        hz, longest = span
        tick_us = 1_000_000 / hz
        if op.delay_us > longest:
            fitting = [n for n, t in counters.items() if (s := _max_us(clocks, t)) and s[1] >= op.delay_us]
            options = [relax(f"use {n}", replace([*base, "counter"], n)) for n in fitting[:2]]
            options.append(relax(f"wait {int(longest)} us", replace([*base, "delay_us"], int(longest))))
            found.append(
                violation(
                    "E_COUNTER_RANGE",
                    f"{label}: {op.delay_us} us is beyond {name}'s top value ({timer.bits}-bit at {hz} Hz: "
                    f"{int(longest)} us)",
                    [*base, "delay_us"],
                    [label, name],
                    [measure("delay", op.delay_us, "us"), measure("limit", int(longest), "us")],
                    options,
                )
            )
        elif op.delay_us < tick_us:
            whole = int(-(-tick_us // 1))
            found.append(
                violation(
                    "E_COUNTER_RANGE",
                    f"{label}: {op.delay_us} us is shorter than one tick of {name} ({tick_us:.1f} us at {hz} Hz)",
                    [*base, "delay_us"],
                    [label, name],
                    [measure("delay", op.delay_us, "us"), measure("tick", tick_us, "us")],
                    [relax(f"wait one tick ({whole} us)", replace([*base, "delay_us"], whole))],
                )
            )
    channels = timer.channels or 0
    taken = [
        o.name or f"operations[{i}]"
        for i, o in enumerate(plan.operations[:index])
        if isinstance(o, CounterAlarm) and o.channel == op.channel and (c := _chosen(target, o)) and c[0] == name
    ]
    if taken and op.channel < channels:
        used = {
            o.channel
            for o in plan.operations
            if isinstance(o, CounterAlarm) and (c := _chosen(target, o)) and c[0] == name
        }
        free = [c for c in range(channels) if c not in used][:2]
        found.append(
            violation(
                "E_COUNTER_CHANNEL",
                f"{label}: channel {op.channel} of {name} is already armed by {taken[0]} (one alarm per channel)",
                [*base, "channel"],
                [label, name, taken[0]],
                relaxations=[relax(f"use channel {c}", replace([*base, "channel"], c)) for c in free],
            )
        )
    if op.channel >= channels:
        found.append(
            violation(
                "E_COUNTER_CHANNEL",
                f"{label}: {name} has {channels} compare channel(s), not channel {op.channel}",
                [*base, "channel"],
                [label, name],
                [measure("channels", channels, "count")],
                [relax(f"use channel {c}", replace([*base, "channel"], c)) for c in range(min(channels, 2))],
            )
        )
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: CounterAlarm) -> dict[str, Any]:
    chosen = _chosen(b.target, op)
    if chosen is None or chosen[1].zephyr_counter is None:  # refused by the obligation above
        raise b.unsupported(f"operations[{index}].counter", f"{op.counter} is not offered", [str(op.counter)], [])
    name, timer = chosen
    assert timer.zephyr_counter is not None
    label, _, child = timer.zephyr_counter.partition("/")
    if child:
        b.app.okay(label, f'{child} {{ status = "okay"; }};')
        node = f"DT_CHILD(DT_NODELABEL({label}), {child})"
    else:
        b.app.okay(label)
        node = f"DT_NODELABEL({label})"
    b.app.need("counter", "CONFIG_COUNTER")
    b.app.includes.update({"zephyr/drivers/counter.h", "zephyr/sys/atomic.h"})
    # Wait for every alarm plus a 100 ms margin (and the kernel's tick granularity) before calling it lost.
    wait_ms = -(-op.delay_us * op.alarms // 1000) + 100
    return {
        "node": node,
        "counter": name,
        "channel": op.channel,
        "delay_us": op.delay_us,
        "alarms": op.alarms,
        "wait_ms": wait_ms,
        "reactions": attached(b, index),
        "setup": True,
        "step": {"period_ms": None},
    }


SPEC = OpSpec(
    model=CounterAlarm,
    family="counter",
    flags=frozenset({Flag.ISR_CONTEXT, Flag.VALUE}),
    events=("expiry",),
    realizations={"zephyr": Realization(template="counter", view=_zephyr, available=lambda t: bool(offered(t)))},
    checks=(_check,),
    codes=("E_NO_PERIPHERAL", "E_COUNTER_RANGE", "E_COUNTER_CHANNEL"),
)
