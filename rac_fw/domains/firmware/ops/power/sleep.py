"""The ``sleep`` operation: enter a chip power state and leave it on the plan's wake sources."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from rac_fw.contract import Evidence, Relaxation
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.power import (
    PowerFacts,
    PowerState,
    RtcWakeup,
    ck_spre_prescalers,
    nearest_reachable_ms,
    power,
    wake_up_range_ms,
    wake_up_setting,
)
from rac_fw.domains.firmware.facts.query import board_button, clock_hz, exact_name, has_field, has_registers
from rac_fw.domains.firmware.ops.crypto.policy import idf_headers
from rac_fw.domains.firmware.plan import evidence as ev
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.rules import Given, Implies, OneOf, Rule, Unique
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.baremetal import BaremetalBuild
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

STATE = "E_POWER_STATE"
WAKE = "E_POWER_WAKE_SOURCE"
RAM_LOST = "E_POWER_RAM_LOST"
RESUME = "E_POWER_RESUME"
RESET_LAST = "E_POWER_RESET_LAST"
WAKE_TIME = "E_POWER_WAKE_TIME"
#: Fields whose value makes an operation repeat (it reports on its first pass, after the once-only ones).
PERIOD_FIELDS = ("interval_ms", "repeat_interval_ms", "feed_interval_ms", "period_ms")


WakeKind = Literal["gpio", "rtc", "timer"]
#: The wake sources that fire after ``after_ms``.
TIMED_WAKE = ("rtc", "timer")


class Sleep(Operation):
    """Enter the chip power state ``state`` once and leave it on the first of the ``wake`` sources.

    ``state`` is the chip's own name for it (``stop``, ``standby``, ``system_off``, ``light_sleep``,
    ``deep_sleep``…: ``facts/power.yaml``; E_POWER_STATE lists the ones the framework enters).
    Wake sources: ``gpio`` — the active level of ``button``; ``rtc`` — the low-power real-time
    clock's wake-up timer after ``after_ms`` (it keeps counting in the deep states; on the STM32 HAL a whole
    number of its ticks on the LSI must make ``after_ms``: E_POWER_WAKE_TIME); ``timer`` — a
    high-speed timer after ``after_ms`` (it stops with the main clocks: it cannot end an STM32 Stop).
    Each source must be able to end the state (E_POWER_WAKE_SOURCE names the state and the sources
    that can), and a plan that continues with its RAM after the wake-up (``resume: continue``) cannot
    pick a state whose wake-up is a reset (E_POWER_RAM_LOST).
    """

    op: Literal["sleep"]
    state: Name
    wake: list[WakeKind] = Field(min_length=1, max_length=3)
    after_ms: int | None = Field(default=None, ge=1, le=86_400_000, description="rtc/timer: wake after this long.")
    button: Name | None = Field(
        default=None, description="gpio: board button or resources.pins entry whose active level wakes the chip."
    )
    resume: Literal["continue", "restart"] = Field(
        default="continue",
        description="continue: the program goes on after the wake-up with its RAM; restart: a wake-up that "
        "restarts the application (reset) is intended.",
    )

    rules: ClassVar[tuple[Rule, ...]] = (
        Unique("each wake source may be listed once", "wake"),
        Implies("'after_ms' is needed exactly when an rtc or timer wake source is listed",
                OneOf("wake", TIMED_WAKE), Given("after_ms"), iff=True),
        Implies("'button' is needed exactly when a gpio wake source is listed", OneOf("wake", ("gpio",)),
                Given("button"), iff=True),
    )  # fmt: skip


# --- what the facts say about one use -----------------------------------------------------------------
def _wake_pin(plan: Plan, target: Target, name: str) -> str | None:
    button = board_button(target, name)
    if button is not None:
        return button.pin
    use = plan.pin_use(name)
    return use.pin if use is not None else None


def _gpio_ok(state: PowerState, pin: str | None) -> bool:
    source = state.wakes("gpio")
    return source is not None and pin is not None and (not source.pins or pin in source.pins)


def _wakes(plan: Plan, target: Target, state: PowerState, op: Sleep, kind: str) -> bool:
    if kind == "gpio":
        return _gpio_ok(state, _wake_pin(plan, target, op.button or ""))
    return state.wakes(kind) is not None


def _fits(plan: Plan, target: Target, state: PowerState, op: Sleep) -> bool:
    """Every wake source ends ``state`` and its RAM behaviour is what the plan expects."""
    ram_ok = op.resume == "restart" or not state.wake_resets
    return ram_ok and all(_wakes(plan, target, state, op, k) for k in op.wake)


def _state_options(
    plan: Plan, target: Target, facts: PowerFacts, framework: str, op: Sleep, index: int
) -> list[Relaxation]:
    return [
        ev.relax(f"enter {s.name} instead ({s.description})", ev.replace(["operations", index, "state"], s.name))
        for s in facts.for_framework(framework)
        if s.name != op.state and _fits(plan, target, s, op)
    ]


def _capable_button(target: Target, state: PowerState, other_than: str | None) -> str | None:
    gpio = state.wakes("gpio")
    if gpio is None:
        return None
    for button in target.board.buttons:
        if (not gpio.pins or button.pin in gpio.pins) and exact_name(button) != other_than:
            return exact_name(button)
    return None


def _wake_options(
    plan: Plan, target: Target, state: PowerState, op: Sleep, index: int, kind: WakeKind
) -> list[Relaxation]:
    """Replace the failing wake source by one that ends ``state``: a board button on a wake-capable pin,
    or the RTC (each a complete plan: the fields the new source needs come with it)."""
    at: ev.Path = ["operations", index]
    position = op.wake.index(kind)
    others = [k for k in op.wake if k != kind]
    options: list[Relaxation] = []
    button = _capable_button(target, state, op.button if kind == "gpio" else None)
    if button is not None and kind == "gpio":
        options.append(ev.relax(f"wake on button {button} (wake-capable in {state.name})",
                                ev.replace([*at, "button"], button)))  # fmt: skip
    elif button is not None and "gpio" not in op.wake:
        steps = [ev.replace([*at, "wake", position], "gpio"), ev.replace([*at, "button"], button)]
        if all(k == "gpio" for k in others):
            steps.append(ev.remove([*at, "after_ms"]))
        options.append(ev.relax(f"wake on button {button} instead of the {kind}", *steps))
    for alternative in ("rtc", "timer"):
        if alternative != kind and alternative not in op.wake and state.wakes(alternative) is not None:
            steps = [ev.replace([*at, "wake", position], alternative)]
            if op.after_ms is None:
                steps.append(ev.replace([*at, "after_ms"], 1000))
            if kind == "gpio":
                steps.append(ev.remove([*at, "button"]))
            options.append(ev.relax(f"wake by the {alternative} instead of the {kind}", *steps))
            break
    if others and not options:
        steps = [ev.remove([*at, "wake", position])]
        if kind == "gpio":
            steps.append(ev.remove([*at, "button"]))
        elif all(k == "gpio" for k in others):
            steps.append(ev.remove([*at, "after_ms"]))
        options.append(ev.relax(f"drop the {kind} wake source", *steps))
    return options


def _check(plan: Plan, target: Target, framework: str, index: int, op: Sleep) -> list[Evidence]:
    if framework not in SPEC.realizations:
        return []  # the support obligation names the frameworks that realize sleep
    facts = power(target)
    where: ev.Path = ["operations", index, "state"]
    if facts is None or not facts.for_framework(framework):
        others = [f for f in target.frameworks if f != framework and facts is not None and facts.for_framework(f)]
        return [ev.violation(
            STATE, f"{framework} on {target.id} enters no power state rac-fw knows", where, [target.id, framework],
            relaxations=[ev.relax(f"use framework {f}", ev.replace(["framework"], f)) for f in others],
        )]  # fmt: skip
    state = facts.state(op.state)
    if state is None or framework not in state.enter:
        known = [s.name for s in facts.for_framework(framework)]
        why = "is not a power state of" if state is None else f"is a state {framework} cannot enter on"
        return [ev.violation(
            STATE, f"{op.state} {why} {target.id} (states {framework} enters: {', '.join(known)})",
            where, [op.state, target.id, framework],
            relaxations=_state_options(plan, target, facts, framework, op, index),
        )]  # fmt: skip
    found: list[Evidence] = []
    capable = ", ".join(w.kind + (f" (pins {' '.join(w.pins)})" if w.pins else "") for w in state.wake)
    other_states = _state_options(plan, target, facts, framework, op, index)
    for kind in op.wake:
        if _wakes(plan, target, state, op, kind):
            continue
        pin = _wake_pin(plan, target, op.button or "") if kind == "gpio" else None
        if kind == "gpio" and pin is None:
            continue  # an unknown button name is the binding obligation's evidence
        if kind == "gpio" and state.wakes("gpio") is not None:
            message = f"{op.button} ({pin}) cannot wake {target.id} from {state.name}: only {capable} can"
        else:
            message = f"a {kind} cannot wake {target.id} from {state.name}; wake sources there: {capable}"
        elsewhere = [s.name for s in facts.waking(kind, framework) if s.name != state.name]
        if elsewhere:
            message += f" (a {kind} wakes from: {', '.join(elsewhere)})"
        found.append(ev.violation(
            WAKE, message, ["operations", index, "wake", op.wake.index(kind)],
            [state.name, kind, *([op.button, pin] if kind == "gpio" and op.button and pin else [])],
            [ev.measure("wake_after", op.after_ms, "ms")] if op.after_ms and kind != "gpio" else [],
            _wake_options(plan, target, state, op, index, kind) + other_states,
        ))  # fmt: skip
    if "rtc" in op.wake and op.after_ms is not None and state.wakes("rtc") is not None:
        found.extend(_wake_time(target, framework, state, op, index))
    if not state.wake_resets and op.resume == "restart":
        found.append(ev.violation(
            RESUME, f"{state.name} keeps RAM and returns from the sleep call: resume: restart would do nothing",
            ["operations", index, "resume"], [state.name, op.name or op.op],
            relaxations=[ev.relax("continue after waking (resume: continue)", ev.replace([*where[:2], "resume"],
                                                                                   "continue"))],
        ))  # fmt: skip
    if state.wake_resets and op.resume == "restart":
        found.extend(_reset_last(plan, target, state, op, index, other_states))
    if state.wake_resets and op.resume == "continue":
        lost = sum(r.size for r in target.memory if r.kind in ("sram", "dtcm", "ccm"))
        kept = f" (kept: {', '.join(state.retained)})" if state.retained else ""
        found.append(ev.violation(
            RAM_LOST,
            f"{state.name} loses RAM and its wake-up is a reset{kept}, but {op.name or f'operations[{index}]'} "
            "continues after waking (resume: continue)",
            ["operations", index, "resume"], [state.name, op.name or op.op, target.id],
            [ev.measure("ram_lost", lost, "bytes")],
            [ev.relax("accept a restart on wake-up (resume: restart)", ev.replace([*where[:2], "resume"], "restart")),
             *other_states],
        ))  # fmt: skip
    return found


#: Frameworks whose sleep programs the RTC wake-up timer itself (counter and clock from ``after_ms``);
#: the RTOS frameworks hand ``after_ms`` to their own timer drivers.
PROGRAMS_RTC_WAKEUP = ("hal",)


def rtc_timer(target: Target, framework: str, state: PowerState) -> tuple[RtcWakeup, int] | None:
    """The RTC wake-up timer facts and its clock's frequency when ``framework`` programs that timer to end
    ``state`` (its mechanism admits an ``rtc`` source there); None otherwise."""
    facts = power(target)
    wakeup = facts.rtc_wakeup if facts is not None else None
    mechanism = state.enter.get(framework)
    if framework not in PROGRAMS_RTC_WAKEUP or wakeup is None or mechanism not in ("stop", "standby"):
        return None
    hz = clock_hz(target, wakeup.clock, framework)
    return (wakeup, int(hz)) if hz else None


def _window(wakeup: RtcWakeup, hz: int, after_ms: int) -> tuple[float, float] | None:
    """(earliest, latest) ms a nominal ``after_ms`` lands at over the oscillator's datasheet spread, if known."""
    if not wakeup.clock_min_hz or not wakeup.clock_max_hz:
        return None
    return after_ms * hz / wakeup.clock_max_hz, after_ms * hz / wakeup.clock_min_hz


def _drift(wakeup: RtcWakeup, hz: int, after_ms: int) -> str:
    """Where a nominal ``after_ms`` lands over the oscillator's spread, said in words (``_window``)."""
    window = _window(wakeup, hz, after_ms)
    if window is None:
        return f" ({wakeup.clock} taken as {hz} Hz; its spread is not in the facts)"
    return (f" ({wakeup.clock} {wakeup.clock_min_hz}-{wakeup.clock_max_hz} Hz: the wake-up comes after "
            f"{window[0]:.0f}-{window[1]:.0f} ms)")  # fmt: skip


def _spread(wakeup: RtcWakeup, hz: int, after_ms: int) -> list[Any]:
    """The earliest and latest wake-up (``_window``) as magnitudes; none when the spread is not in the facts."""
    window = _window(wakeup, hz, after_ms)
    return [] if window is None else [ev.measure("earliest", window[0], "ms"), ev.measure("latest", window[1], "ms")]


def _wake_time(target: Target, framework: str, state: PowerState, op: Sleep, index: int) -> list[Evidence]:
    """E_POWER_WAKE_TIME: the RTC wake-up timer reaches ``after_ms`` only as whole ticks of one of its clocks
    (RTCCLK/2../16 with a 16-bit counter, then whole seconds of ck_spre): beyond the finest clock's reach a
    delay that is no whole number of ticks cannot be programmed. Relaxations: the nearest reachable delays."""
    found = rtc_timer(target, framework, state)
    if found is None or op.after_ms is None:
        return []
    wakeup, hz = found
    if wake_up_setting(wakeup, hz, op.after_ms) is not None:
        return []
    shortest, longest = wake_up_range_ms(wakeup, hz)
    nearest = nearest_reachable_ms(wakeup, hz, op.after_ms)
    divided = max(wakeup.rtcclk_dividers) * (1 << wakeup.counter_bits) * 1000 / hz
    return [ev.violation(
        WAKE_TIME, f"the RTC wake-up timer of {target.id} ({wakeup.clock} {hz} Hz) cannot wake {state.name} after "
        f"exactly {op.after_ms} ms: it reaches {shortest:g}-{longest:.0f} ms, beyond {divided:g} ms only in whole "
        f"seconds of ck_spre{_drift(wakeup, hz, op.after_ms)}",
        ["operations", index, "after_ms"], [state.name, "rtc", wakeup.irq, op.name or op.op],
        [ev.measure("wake_after", op.after_ms, "ms"), ev.measure("shortest", shortest, "ms"),
         ev.measure("longest", longest, "ms"), ev.measure("rtc_clock", hz, "Hz"), *_spread(wakeup, hz, op.after_ms)],
        [ev.relax(f"wake after {ms} ms (reachable by the wake-up timer)",
                  ev.replace(["operations", index, "after_ms"], ms)) for ms in nearest],
    )]  # fmt: skip


def _periodic(other: Any) -> bool:
    return any(getattr(other, f, None) for f in PERIOD_FIELDS)


def _reset_last(
    plan: Plan, target: Target, state: PowerState, op: Sleep, index: int, other_states: list[Relaxation]
) -> list[Evidence]:
    """E_POWER_RESET_LAST: a state whose wake-up is a reset ends the run, so every other operation must
    have run and reported before it — the sleep is the plan's last operation and nothing repeats
    (a periodic operation reports on its first loop pass, which would come after the sleep)."""
    count = len(plan.operations)
    later = list(range(index + 1, count))
    periodic = [i for i, other in enumerate(plan.operations) if i != index and _periodic(other)]
    if not later and not periodic:
        return []
    blocking = sorted(set(later) | set(periodic))

    def named(indices: list[int]) -> str:
        return ", ".join(f"{plan.operations[i].name or plan.operations[i].op} (operations[{i}])" for i in indices)

    why = [f"{named(later)} after it" if later else "", f"{named(periodic)} repeating" if periodic else ""]
    steps = [ev.remove(["operations", i]) for i in sorted({*periodic, index}, reverse=True)]
    steps.append(ev.add(["operations", -1], op.model_dump(mode="json", exclude_none=True)))
    dropped = [plan.operations[i].name or plan.operations[i].op for i in periodic]
    how = f"drop the periodic {', '.join(dropped)} and sleep last" if dropped else "move the sleep to the end"
    return [ev.violation(
        RESET_LAST, f"{state.name} on {target.id} wakes by a reset, so the run ends there; with "
        f"{' and '.join(w for w in why if w)} those operations would never report (no 'rac: done')",
        ["operations", index], [state.name, op.name or op.op, *(plan.operations[i].op for i in blocking)],
        [ev.measure("operations_after", len(blocking), "operations")],
        [ev.relax(how, *steps), *other_states],
    )]  # fmt: skip


def _mechanism(target: Target, framework: str, op: Sleep) -> str:
    facts = power(target)
    state = facts.state(op.state) if facts else None
    if state is None or framework not in state.enter:
        raise LookupError(f"{op.state} is not a state {framework} enters (the obligations refuse this plan)")
    return state.enter[framework]


# --- realizations ---------------------------------------------------------------------------------------
def _zephyr(b: ZephyrBuilder, index: int, op: Sleep) -> dict[str, Any]:
    oid = b.ids[index]
    mechanism = _mechanism(b.target, "zephyr", op)
    if mechanism == "pm":
        b.app.need("power", "CONFIG_PM")
    if mechanism == "poweroff":
        # hwinfo: the reset cause printed on boot tells a wake-up from a first start.
        b.app.need("power", "CONFIG_POWEROFF", "CONFIG_HWINFO")
        b.app.includes.update({"zephyr/sys/poweroff.h", "zephyr/drivers/hwinfo.h"})
    spec = None
    if op.button is not None:
        b.app.need("gpio")
        spec = b.gpio_spec("wake", op.button, f"operations.{index}.button", "button", oid)
    return {
        "id": oid,
        "mechanism": mechanism,
        "state": op.state,
        "state_c": c_string(op.state),
        "after_ms": op.after_ms,
        "button": spec,
        "setup": True,
        "step": {"period_ms": None},
    }


def _espidf(b: EspIdfBuild, index: int, op: Sleep) -> dict[str, Any]:
    b.requires.add("esp_hw_support")
    pin = None
    if op.button is not None:
        gpio, active_low = b.io(op.button, "button", f"operations[{index}].button")
        pin = {"gpio": gpio, "level": 0 if active_low else 1, "active_low": active_low}
    return {
        "headers": idf_headers(b, "esp_sleep.h"),
        "mechanism": _mechanism(b.target, "espidf", op),
        "state_c": c_string(op.state),
        "after_us": op.after_ms * 1000 if op.after_ms else None,
        "pin": pin,
        "others": len(b.plan.operations) - 1,
        "wait_ms": RESET_REPORT_WAIT_MS,
    }


#: ESP-IDF deep sleep: how long the sleeping operation waits for the other operations' first reports
#: (their tasks run concurrently with app_main) before it reports and sleeps.
RESET_REPORT_WAIT_MS = 10_000


#: The wake sources each WFI-based mechanism of bare metal and the STM32 HAL is built with: Sleep mode is
#: woken by the 1 kHz SysTick; Stop (SysTick suspended, main clocks off) and Standby by the button's
#: EXTI line / WKUP pin, and — where the framework programs it (``PROGRAMS_RTC_WAKEUP``) and the chip facts
#: describe it (``power.rtc_wakeup``) — the RTC wake-up timer.
SUPER_LOOP_WAKE: dict[str, tuple[WakeKind, ...]] = {"idle": ("timer",), "stop": ("gpio",), "standby": ("gpio",)}


def super_loop_wake(target: Target, framework: str, state: PowerState) -> tuple[WakeKind, ...]:
    """The wake sources ``framework`` builds for ``state`` (``SUPER_LOOP_WAKE`` plus the RTC timer)."""
    allowed = SUPER_LOOP_WAKE.get(state.enter.get(framework, ""), ())
    return (*allowed, "rtc") if rtc_timer(target, framework, state) is not None else allowed


def _super_loop_admits(framework: str) -> Any:
    def admits(plan: Plan, target: Target, index: int, op: Sleep) -> list[Evidence]:
        """Only the wake sources ``super_loop_wake`` lists for the state's mechanism are built here."""
        facts = power(target)
        state = facts.state(op.state) if facts else None
        if state is None or framework not in state.enter:
            return []  # the state obligation answers
        allowed = super_loop_wake(target, framework, state)
        extra = [k for k in op.wake if k not in allowed]
        if not extra:
            return []
        at: ev.Path = ["operations", index]
        options: list[Relaxation] = []
        if allowed == ("timer",):
            steps = [ev.replace([*at, "wake"], ["timer"])]
            if op.after_ms is None:
                steps.append(ev.replace([*at, "after_ms"], 1000))
            if op.button is not None:
                steps.append(ev.remove([*at, "button"]))
            options.append(ev.relax("wake on the SysTick timer only", *steps))
        else:
            button = op.button if op.button and _wakes(plan, target, state, op, "gpio") else None
            button = button or _capable_button(target, state, None)
            if button is not None:
                steps = [ev.replace([*at, "wake"], ["gpio"]), ev.replace([*at, "button"], button)]
                if op.after_ms is not None:
                    steps.append(ev.remove([*at, "after_ms"]))
                options.append(ev.relax(f"wake on button {button} only", *steps))
        others = [f for f in target.frameworks if f not in (framework, "baremetal", "hal") and f in SPEC.realizations]
        source = (
            "the SysTick timer"
            if allowed == ("timer",)
            else " or ".join({"gpio": "a button", "rtc": "the RTC wake-up timer"}[k] for k in allowed)
        )
        return [ev.violation(
            "E_TARGET_UNSUPPORTED", f"{framework} {state.name} wakes only on {source}; {', '.join(extra)} need the "
            f"{' or '.join(others) or 'RTOS'} drivers", [*at, "wake"], [op.state, *extra],
            relaxations=[*options, *(ev.relax(f"use framework {f}", ev.replace(["framework"], f)) for f in others)],
        )]  # fmt: skip

    return admits


def _baremetal(b: BaremetalBuild, index: int, op: Sleep) -> None:
    after = op.after_ms or 0
    ctx = b.base(index, op) | {"state": op.state, "after_ms": after, "max_wakes": after * 4 + 64}
    b.emit("ops/sleep", ctx)


def _hal(b: HalBuild, index: int, op: Sleep) -> dict[str, Any]:
    """Sleep: a WFI loop over the SysTick. Stop: the button's EXTI line and/or the RTC wake-up timer armed,
    the SysTick suspended, ``HAL_PWR_EnterSTOPMode`` until one fires, then ``SystemClock_Config`` again (Stop
    exits on the HSI, RM0090 §5.3.5 / RM0433 §6.6.7) and the wake-up timer deactivated. Standby: the
    button's WKUP pin (its index in the facts' WKUP list) armed with its flag cleared and/or the wake-up
    timer armed with its flags cleared, then ``HAL_PWR_EnterSTANDBYMode``; the next boot reads PWR_FLAG_SB."""
    mechanism = _mechanism(b.target, "hal", op)
    view = b.base_view(index, op)
    view.update(state=op.state, after_ms=op.after_ms or 0, mechanism=mechanism, rtc=None)
    facts = power(b.target)
    state = facts.state(op.state) if facts else None
    # Per-pin wake-up flags in PWR_WKUPFR/WKUPCR where the PWR has them (RM0433 §6.8, WKUP pins only), else
    # the one CSR.WUF that a WKUP pin and the RTC both set (RM0090 §5.4.2).
    per_pin = has_registers(b.target, "PWR", "WKUPCR")
    if mechanism == "stop" and op.button is not None:
        pin = b.input_view(view, op.button, None, f"operations[{index}].button")
        view["mode"] = "GPIO_MODE_IT_FALLING" if view["active_low"] else "GPIO_MODE_IT_RISING"
        line = pin.number
        view["irq"] = b.irq("EXTI", f"EXTI{line}" if line <= 4 else ("EXTI9_5" if line <= 9 else "EXTI15_10"))
        view["priority"] = 5
        b.exti.setdefault(view["irq"], []).append(view)
    if mechanism == "standby" and op.button is not None:
        gpio = state.wakes("gpio") if state else None
        pin, _ = b.io(op.button, "button", f"operations[{index}].button")
        if gpio is None or pin.name not in gpio.pins:
            raise b.unsupported(f"operations.{index}.button", f"{pin.name} is not a WKUP pin of {b.target.id}")
        wkup = gpio.pins.index(pin.name) + 1
        view.update(wkup=wkup, wkup_pin=pin.name)
        view["clear_wake"] = (
            f"__HAL_PWR_CLEAR_WAKEUPFLAG(PWR_WAKEUP_FLAG{wkup})" if per_pin else "__HAL_PWR_CLEAR_FLAG(PWR_FLAG_WU)"
        )
    if "rtc" in op.wake and state is not None:
        view["rtc"] = _hal_rtc(b, index, op, state, per_pin)
    return view


def _hal_rtc(b: HalBuild, index: int, op: Sleep, state: PowerState, per_pin: bool) -> dict[str, Any]:
    """The RTC wake-up timer on the LSI: prescalers for the 1 Hz ck_spre, the wake-up clock and counter for
    ``after_ms`` (``wake_up_setting``), its vector, and the IRQ handler it.c dispatches to the HAL."""
    where = f"operations.{index}.after_ms"
    found = rtc_timer(b.target, "hal", state)
    if found is None or op.after_ms is None:
        raise b.unsupported(where, f"{b.target.id}: no RTC wake-up timer facts for {state.name} (power.rtc_wakeup)")
    wakeup, hz = found
    setting = wake_up_setting(wakeup, hz, op.after_ms)
    prescalers = ck_spre_prescalers(wakeup, hz)
    if setting is None or prescalers is None:
        raise b.unsupported(where, f"{op.after_ms} ms is not reachable by the RTC wake-up timer")  # E_POWER_WAKE_TIME
    if any(v.get("rtc") for v in b.views):
        raise b.unsupported(where, "one sleep operation owns the RTC wake-up timer; another one already does")
    irq = b.irq("RTC", wakeup.irq)
    b.modules.add("RTC")
    b.notes.append(
        f"{op.name or f'operations[{index}]'}: RTC wake-up timer {setting.selection} WUT {setting.counter} "
        f"= {op.after_ms} ms at {wakeup.clock} {hz} Hz; {_drift(wakeup, hz, op.after_ms).strip(' ()')}"
    )
    b.handlers.append({"irq": irq, "type": "RTC_HandleTypeDef", "handle": "hrtc",
                       "call": "HAL_RTCEx_WakeUpTimerIRQHandler"})  # fmt: skip
    return {
        "clock": wakeup.clock, "hz": hz, "irq": irq, "priority": 5,
        "selection": f"RTC_WAKEUPCLOCK_{setting.selection}", "counter": setting.counter, "ticks": setting.ticks,
        "tick": f"{setting.tick_s:g} s" if setting.tick_s >= 1 else f"{setting.tick_s * 1e6:g} us",
        "async": prescalers[0] - 1, "sync": prescalers[1] - 1,
        # The APB interface of the RTC has its own gate where the RCC has RTCAPBEN (RM0433 RCC_APB4ENR).
        "apb_gate": has_field(b.target, "RCC", "RTCAPBEN"),
        "remap": b.hal.rtc_output_remap,
        "clear_pwr": None if per_pin else "__HAL_PWR_CLEAR_FLAG(PWR_FLAG_WU)",
        "spread": _drift(wakeup, hz, op.after_ms).strip(" ()"),
    }  # fmt: skip


def _enters(framework: str) -> Any:
    def available(target: Target) -> bool:
        facts = power(target)
        return facts is not None and bool(facts.for_framework(framework))

    return available


SPEC = OpSpec(
    model=Sleep,
    family="power",
    endpoints={"button": "button"},
    realizations={
        "zephyr": Realization(template="power", view=_zephyr, available=_enters("zephyr")),
        "espidf": Realization(template="power", view=_espidf, available=_enters("espidf")),
        "baremetal": Realization(
            template="ops/sleep",
            view=_baremetal,
            available=_enters("baremetal"),
            admits=_super_loop_admits("baremetal"),
        ),
        "hal": Realization(template="power", view=_hal, available=_enters("hal"), admits=_super_loop_admits("hal")),
    },
    checks=(_check,),
    codes=(STATE, WAKE, RAM_LOST, RESET_LAST, WAKE_TIME, RESUME),
)
