"""Events and reactions: publishers declare events, reactions attach, the realizer picks the context.

Seeded violations (E_ISR_BLOCKING, E_REACTION_EVENT, E_REACTION_TARGET, E_REACTION_CONTEXT,
E_UNKNOWN_RESOURCE, E_PIN_CONFLICT) name the objects in conflict and every relaxation they offer
validates once applied (``seeded_kernel.seeded``); the Zephyr realization defers a blocking reaction
out of the ISR into a work item and runs a non-blocking one in the ISR itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.ops.events import placement
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.matrix import frameworks_for
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

TICK = {"op": "timer_periodic", "name": "tick", "period_ms": 100}
BUTTON = {"op": "gpio_input_irq", "name": "button", "button": "sw0", "edge": "falling"}


def _plan(*ops: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"target": "nrf52840", "framework": "zephyr", "operations": list(ops), **top}


def _react(**fields: Any) -> dict[str, Any]:
    return {"op": "react", "name": "r", "source": "tick", "event": "expiry", **fields}


SEEDED = [
    ("log-in-isr", _plan(TICK, _react(action="log", message="tick", context="isr")), "E_ISR_BLOCKING", {"r", "tick"}),
    (
        "wrong-event",
        _plan(BUTTON, {"op": "react_led", "name": "r", "source": "button", "event": "expiry", "led": "led0"}),
        "E_REACTION_EVENT",
        {"r", "button", "expiry"},
    ),
    ("unknown-source", _plan(TICK, _react(source="tock", action="count")), "E_UNKNOWN_RESOURCE", {"tock", "r"}),
    (
        "give-a-timer",
        _plan(
            TICK,
            {"op": "semaphore", "name": "sig", "taker": "worker", "take_timeout_ms": 100},
            _react(action="give", target="tick"),
            resources={"threads": [{"name": "worker", "priority": 5, "stack_bytes": 1024}]},
        ),
        "E_REACTION_TARGET",
        {"r", "tick"},
    ),
    (
        "isr-for-a-thread-event",
        _plan({"op": "work_item", "name": "job"}, _react(source="job", event="done", action="count", context="isr")),
        "E_REACTION_CONTEXT",
        {"r", "job"},
    ),
    (
        "deferred-before-a-reset",
        _plan(
            {"op": "task_watchdog", "name": "wd", "threads": ["worker"], "timeout_ms": 1000, "feed_interval_ms": 200},
            _react(source="wd", action="count", context="deferred"),
            resources={"threads": [{"name": "worker", "priority": 5, "stack_bytes": 1024}]},
        ),
        "E_REACTION_CONTEXT",
        {"r", "wd"},
    ),
    (
        "led-driven-twice",
        _plan(
            BUTTON,
            {"op": "gpio_blink", "led": "led0", "period_ms": 500},
            {"op": "react_led", "name": "r", "source": "button", "event": "edge", "led": "led0"},
        ),
        "E_PIN_CONFLICT",
        {"P0.13"},
    ),
]


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_reaction_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert evidence.location.startswith("operations[") or evidence.location.startswith("resources")
    assert broken == []


def test_publishers_declare_events_and_the_context_follows_the_flags() -> None:
    assert spec("gpio_input_irq").events == ("edge",) and spec("timer_periodic").events == ("expiry",)
    assert spec("work_item").events == ("done",) and spec("task_watchdog").events == ("expiry",)
    plan = parse_plan(_plan(TICK, _react(action="log", message="t"), {**_react(action="count"), "name": "c"}))
    log, count = plan.operations[1], plan.operations[2]
    assert placement(plan, log) == "work" and placement(plan, count) == "isr"
    done = parse_plan(
        _plan({"op": "work_item", "name": "job"}, _react(source="job", event="done", action="log", message="d"))
    )
    assert placement(done, done.operations[1]) == "thread"


def test_zephyr_defers_the_blocking_reaction_and_keeps_the_isr_clean() -> None:
    plan = load_plan(data_dir("examples") / "events_button_led.yaml")
    target = load_target("nrf52840")
    main = lower(plan, target, "zephyr").files["src/main.c"]
    isr = main[main.index("static void app_tick_expiry") : main.index("K_TIMER_DEFINE(app_tick_timer")]
    assert "app_ticks_react();" in isr and "app_tick_log_react();" in isr and "printk" not in isr
    assert "K_WORK_DEFINE(app_tick_log_work, app_tick_log_handler);" in main
    react = main[main.index("static void app_tick_log_react(void)\n{") :]
    assert react.index("k_work_submit(&app_tick_log_work) < 0") < react.index("}")
    assert "gpio_pin_toggle_dt(&app_press_toggles_led) == 0" in main


def test_the_verifier_refuses_a_reaction_that_logs_inside_the_isr() -> None:
    """What the obligations refuse, the independent verifier would catch too: inline the log into the ISR."""
    plan = load_plan(data_dir("examples") / "events_button_led.yaml")
    files = lower(plan, load_target("nrf52840"), "zephyr").files
    main = files["src/main.c"]
    start = main.index("static void app_tick_log_react(void)\n{")
    end = main.index("}\n", start) + 2
    inlined = 'static void app_tick_log_react(void)\n{\n\tprintk("tick\\n");\n}\n'
    bad = {**files, "src/main.c": main[:start] + inlined + main[end:]}
    codes = {e.code for e in verify_sources(bad, "zephyr", load_target("nrf52840")).evidence}
    assert "E_ISR_LOGGING" in codes


def test_reactions_are_realized_on_zephyr_and_refused_elsewhere_with_evidence() -> None:
    # STM32 HAL realizes reactions too (tests/test_hal_react.py); bare metal does not.
    assert frameworks_for("react", load_target("stm32f407")) == ["zephyr", "hal"]
    plan = _plan(TICK, _react(action="count"))
    evidence, _ = seeded({**plan, "target": "stm32f407", "framework": "baremetal"}, "E_TARGET_UNSUPPORTED")
    assert "r" in " ".join(evidence.objects) or "react" in evidence.message
