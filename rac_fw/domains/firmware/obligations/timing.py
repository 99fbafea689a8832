"""Timer and PWM obligations, computed from counter widths, prescalers and the clocks the plan runs.

E_TIMER_RANGE: a period the chosen counter cannot produce (SysTick's 24 bits, a 16-bit timer, the
kernel tick) or can only produce with > 1 % error. E_PWM_RESOLUTION: a PWM period so short that the
counter has fewer steps than the duty resolution the operation needs (its op spec says how many: 1 %
for a fixed duty, ``step_percent`` for a fade). Relaxations: another timer from the facts that fits, or
the nearest period that works. The timer and PWM op specs ask :func:`timer_period` / :func:`pwm_period`.
"""

from __future__ import annotations

import math
from typing import Any

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.claims import taken_pins
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import (
    TIMER_CHANNEL,
    Clocks,
    Counter,
    free_pins,
    hardware_timer,
    kernel_tick_hz,
    normalized,
    pwm_unit,
    systick,
    timer_names,
)
from rac_fw.domains.firmware.obligations.frameworks import FRAMEWORKS
from rac_fw.domains.firmware.obligations.refs import endpoint_pin
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.evidence import Path, add, measure, proposing, relax, replace, violation
from rac_fw.domains.firmware.plan.model import Plan

#: Largest relative error between the requested and the produced period.
PERIOD_TOLERANCE = 0.01


def _duration(seconds: float) -> str:
    """``2 s``, ``20 ms``, ``150 µs``: a period in the unit a person would use."""
    if seconds >= 1:
        return f"{seconds:g} s"
    return f"{seconds * 1e3:g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:g} µs"


def _period_patch(op: Any, base: Path, seconds: float, up: bool) -> dict[str, object]:
    """Patch setting the op's period (in the unit it already uses) to ``seconds``, rounded inward."""
    rounding = math.ceil if up else math.floor
    if op.period_ms is not None:
        return replace([*base, "period_ms"], max(1, rounding(seconds * 1e3)))
    return replace([*base, "period_us"], max(1, rounding(seconds * 1e6)))


def _period_field(op: Any, base: Path) -> Path:
    return [*base, "period_ms" if op.period_ms is not None else "period_us"]


def _kernel(plan: Plan, target: Target, framework: str, op: Any, base: Path) -> list[Evidence]:
    rules = FRAMEWORKS[framework]
    tick_hz = kernel_tick_hz(target, framework)
    period = op.period_s
    if tick_hz:
        ticks = period * tick_hz
        produced = max(1, round(ticks)) / tick_hz
        error = abs(produced - period) / period
        if ticks < 1 or error > PERIOD_TOLERANCE:
            fixed_us = _tick_period_us(period, tick_hz)
            return [
                violation(
                    "E_TIMER_RANGE",
                    f"the {framework} kernel timer counts {tick_hz} ticks/s: a {period * 1e6:g} µs "
                    f"period becomes {produced * 1e6:g} µs",
                    _period_field(op, base),
                    [op.name or op.op, "kernel"],
                    [
                        measure("requested", period * 1e6, "us"),
                        measure("produced", produced * 1e6, "us"),
                        measure("error", error * 100, "%"),
                        measure("tick", 1e6 / tick_hz, "us"),
                    ],
                    [
                        relax(
                            f"use a period of {fixed_us} µs (a whole number of ticks)",
                            replace([*base, "period_us"], fixed_us),
                            replace([*base, "period_ms"], None),
                        )
                    ]
                    + _other_timers(plan_clocks(plan, target, framework), period, [*base, "source"]),
                )
            ]
    if period * 1e6 < rules.min_kernel_timer_us:
        return [
            violation(
                "E_TIMER_RANGE",
                f"{framework} kernel timers run at periods ≥ {rules.min_kernel_timer_us} µs",
                _period_field(op, base),
                [op.name or op.op, "kernel"],
                [measure("requested", period * 1e6, "us"), measure("minimum", rules.min_kernel_timer_us, "us")],
                [
                    relax(
                        f"use {rules.min_kernel_timer_us} µs",
                        replace([*base, "period_us"], rules.min_kernel_timer_us),
                        replace([*base, "period_ms"], None),
                    )
                ]
                + _other_timers(plan_clocks(plan, target, framework), period, [*base, "source"]),
            )
        ]
    return []


def _tick_period_us(period: float, tick_hz: int) -> int:
    """The whole-µs period nearest ``period`` that the kernel tick produces within
    ``PERIOD_TOLERANCE``: the nearest admissible value, in the unit the plan can write (at 32768 Hz
    one 30.5 µs tick is 31 µs, 1.6 % off; 100 µs becomes 92 µs, three ticks)."""

    def fits(us: int) -> bool:
        produced = max(1, round(us * tick_hz / 1e6)) / tick_hz
        return abs(produced - us / 1e6) / (us / 1e6) <= PERIOD_TOLERANCE

    near = max(1, round(period * tick_hz))
    periods = (round(ticks * 1e6 / tick_hz) for ticks in range(max(1, near - 100), near + 1000))
    admissible = [us for us in periods if us >= 1 and fits(us)]
    return min(admissible, key=lambda us: abs(us - period * 1e6)) if admissible else round(near * 1e6 / tick_hz)


def _other_timers(clocks: Clocks, period: float, path: Path, skip: str = "") -> list[Relaxation]:
    """Hardware timers of the chip that produce ``period``, when the framework lets a plan name one."""
    if not FRAMEWORKS[clocks.framework].hardware_timers:
        return []
    options = []
    for name in timer_names(clocks.target):
        counter = hardware_timer(clocks, name)
        if name != skip and counter is not None and _fits(counter, period):
            options.append(relax(f"use hardware timer {name} ({counter.top.bit_length()}-bit)", replace(path, name)))
    return options[:3]


def _fits(counter: Counter, period: float) -> bool:
    fitted = counter.fit(period)
    if fitted is None:
        return False
    prescaler, ticks = fitted
    return abs(ticks * prescaler / counter.clock_hz - period) / period <= PERIOD_TOLERANCE


def _counter_check(clocks: Clocks, op: Any, base: Path, counter: Counter) -> list[Evidence]:
    period = op.period_s
    if _fits(counter, period):
        return []
    options = _other_timers(clocks, period, [*base, "source"], skip=counter.name)
    limit = counter.max_period_s if period > counter.max_period_s else max(counter.min_period_s * 50, 1e-6)
    options.append(relax(f"use a period of {_duration(limit)}", _period_patch(op, base, limit, up=period < limit)))
    return [
        violation(
            "E_TIMER_RANGE",
            f"{counter.name} ({counter.top.bit_length()}-bit at {counter.clock_hz} Hz) cannot produce "
            f"{_duration(period)} within 1 %: its range is {_duration(counter.min_period_s)} to "
            f"{_duration(counter.max_period_s)}",
            _period_field(op, base),
            [op.name or op.op, counter.name],
            [
                measure("requested", period * 1e6, "us"),
                measure("max", counter.max_period_s * 1e6, "us"),
                measure("clock", counter.clock_hz, "Hz"),
            ],
            options,
        )
    ]


def _systick(clocks: Clocks, op: Any, base: Path) -> list[Evidence]:
    """SysTick runs the framework's time base (1 ms) at the core clock as the plan runs it; a period is a whole
    number of its ticks."""
    tick_us = FRAMEWORKS[clocks.framework].systick_tick_us
    counter = systick(clocks)
    if tick_us is None or counter is None:
        return []  # E_TARGET_UNSUPPORTED already says SysTick is not the plan's to use here
    period_us = op.period_s * 1e6
    reload = counter.fit(tick_us * 1e-6)
    if reload is not None and period_us % tick_us == 0:
        return []
    whole = max(1, round(period_us / tick_us)) * tick_us
    return [
        violation(
            "E_TIMER_RANGE",
            f"SysTick runs a {tick_us} µs time base at {counter.clock_hz} Hz: a {_duration(op.period_s)} period is "
            f"not a whole number of ticks",
            _period_field(op, base),
            [op.name or op.op, "SysTick"],
            [
                measure("requested", period_us, "us"),
                measure("tick", tick_us, "us"),
                measure("clock", counter.clock_hz, "Hz"),
            ],
            [
                relax(
                    f"use a period of {_duration(whole / 1e6)}",
                    replace([*base, "period_us"], whole),
                    replace([*base, "period_ms"], None),
                )
            ]
            + _other_timers(clocks, op.period_s, [*base, "source"]),
        )
    ]


def _pwm(plan: Plan, target: Target, framework: str, op: Any, base: Path, needed: int) -> list[Evidence]:
    pin = endpoint_pin(plan, target, op.output, output=True)
    clocks = plan_clocks(plan, target, framework)
    unit = pwm_unit(clocks, pin)
    if unit is None:
        return _no_pwm_channel(plan, clocks, op, base, pin)
    period = op.period_us * 1e-6
    path: Path = [*base, "period_us"]
    if period > unit.max_period_s:
        longest = math.floor(unit.max_period_s * 1e6)
        return [
            violation(
                "E_TIMER_RANGE",
                f"PWM counter {unit.name} cannot count a {op.period_us} µs period (max {longest} µs)",
                path,
                [op.output, unit.name],
                [measure("requested", op.period_us, "us"), measure("max", longest, "us")],
                [relax(f"use a period of {longest} µs", replace(path, longest))],
            )
        ]
    steps = unit.steps(period)
    if steps >= needed:
        return []
    shortest = math.ceil(needed / unit.clock_hz * 1e6)
    return [
        violation(
            "E_PWM_RESOLUTION",
            f"a {op.period_us} µs period gives {unit.name} only {steps} counter steps at "
            f"{unit.clock_hz} Hz; the duty needs {needed}",
            path,
            [op.output, unit.name],
            [
                measure("steps", steps, "steps"),
                measure("needed", needed, "steps"),
                measure("clock", unit.clock_hz, "Hz"),
            ],
            [relax(f"use a period of {shortest} µs", replace(path, shortest))],
        )
    ]


def _no_pwm_channel(plan: Plan, clocks: Clocks, op: Any, base: Path, pin: str | None) -> list[Evidence]:
    """E_PIN_FUNCTION when the output pin has no timer channel (alternate-function chips)."""
    target = clocks.target
    facts = target.pins.get(pin) if pin else None
    if facts is None or facts.routing != "af":
        return []
    options: list[Relaxation] = []
    for led in target.board.leds if proposing() else ():
        if led.pin != pin and pwm_unit(clocks, led.pin) is not None:
            label = normalized(led.dt_label or led.name)
            options.append(
                relax(f"use board LED {label} on {led.pin} (has a timer channel)", replace([*base, "output"], label))
            )
    taken = taken_pins(plan, target) if proposing() else frozenset()
    for candidate in free_pins(target, taken, "GPIO", near=pin) if proposing() else ():
        channel = next((f for f in candidate.functions if TIMER_CHANNEL.match(f.signal)), None)
        if channel is not None and pwm_unit(clocks, candidate.name) is not None:
            name = f"pwm_{candidate.name.lower()}"
            options.append(
                relax(
                    f"drive {candidate.name} ({channel.signal}, AF{channel.af}) instead",
                    add(["resources", "pins", -1], {"name": name, "pin": candidate.name, "function": channel.signal}),
                    replace([*base, "output"], name),
                )
            )
            break
    return [
        violation(
            "E_PIN_FUNCTION",
            f"{pin} has no timer channel, so it cannot output PWM",
            [*base, "output"],
            [op.output, pin or op.output],
            relaxations=options,
        )
    ]


def timer_period(plan: Plan, target: Target, framework: str, index: int, op: Any) -> list[Evidence]:
    """E_TIMER_RANGE for a timer operation: its ``period_ms``/``period_us`` against the counter its ``source``
    names (the kernel tick, SysTick or a hardware timer), asked by the timer op specs."""
    if framework not in FRAMEWORKS:
        return []
    base: Path = ["operations", index]
    if op.source == "kernel":
        return _kernel(plan, target, framework, op, base) if FRAMEWORKS[framework].kernel_timer else []
    clocks = plan_clocks(plan, target, framework)
    if op.source == "systick":
        return _systick(clocks, op, base)
    counter = hardware_timer(clocks, op.source)
    if counter is not None and FRAMEWORKS[framework].hardware_timers:
        return _counter_check(clocks, op, base, counter)
    return []


def pwm_period(plan: Plan, target: Target, framework: str, index: int, op: Any, needed: int) -> list[Evidence]:
    """A PWM operation's ``period_us`` on the unit driving its ``output``: the counter must count it
    (E_TIMER_RANGE) in at least ``needed`` steps (E_PWM_RESOLUTION: the duty resolution the operation
    needs, which the op spec states), on a pin a timer channel reaches (E_PIN_FUNCTION)."""
    if framework not in FRAMEWORKS:
        return []
    return _pwm(plan, target, framework, op, ["operations", index], needed)
