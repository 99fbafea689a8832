"""Reactions on ESP-IDF: the ISR runs what never waits, a FreeRTOS task the ISR notifies runs the rest.

The publishers' ISRs (GPIO ISR service handler, ISR-dispatched esp_timer callback) call each attached
reaction's ``<sym>_react(&woken)``; a non-blocking reaction does its work there (``gpio_set_level``,
made IRAM-safe by CONFIG_GPIO_CTRL_FUNC_IN_IRAM; ``xSemaphoreGiveFromISR``), a blocking one only
``vTaskNotifyGiveFromISR``s its task, which runs it once per pending notification. The obligations are the
Zephyr ones (E_ISR_BLOCKING with deferral as relaxation…); the verifier refuses the unsafe variants, and
the ESP-IDF kernel rules (a bad source each) refuse what a hand-written reaction gets wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.plan.matrix import frameworks_for
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

EXAMPLE = data_dir("examples") / "events_espidf_reactions.yaml"
BAD = Path(__file__).resolve().parent / "bad_sources" / "espidf"
TICK = {"op": "timer_periodic", "name": "tick", "period_ms": 100}
PIN = {"pins": [{"name": "led", "pin": "GPIO2", "function": "GPIO"}]}


def _plan(*ops: dict[str, Any], **resources: Any) -> dict[str, Any]:
    return {"target": "esp32s3", "framework": "espidf", "resources": resources, "operations": list(ops)}


def _files() -> dict[str, str]:
    return lower(load_plan(EXAMPLE), load_target("esp32s3"), "espidf").files


def _body(main: str, signature: str) -> str:
    start = main.index(signature)
    return main[start : main.index("\n}\n", start)]


SEEDED = [
    ("log-in-isr", _plan(TICK, {"op": "react", "name": "r", "source": "tick", "event": "expiry", "action": "log",
                                "message": "t", "context": "isr"}), "E_ISR_BLOCKING", {"r", "tick"}),
    ("give-nothing", _plan(TICK, {"op": "react", "name": "r", "source": "tick", "event": "expiry", "action": "give"},
                           {"op": "semaphore", "name": "sig", "taker": "worker", "initial": 1, "take_timeout_ms": 50},
                           threads=[{"name": "worker", "priority": 5, "stack_bytes": 4096}]),
     "E_REACTION_TARGET", {"r"}),
    ("led-on-a-timer-event-that-does-not-exist", _plan(
        {"op": "gpio_input_irq", "name": "button", "button": "sw0", "edge": "falling"},
        {"op": "react_led", "name": "r", "source": "button", "event": "expiry", "led": "led"}, **PIN),
     "E_REACTION_EVENT", {"r", "button"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_reaction_violation_on_espidf_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert broken == []


def test_reactions_are_realized_on_espidf() -> None:
    target = load_target("esp32s3")
    assert set(frameworks_for("react", target)) == set(frameworks_for("react_led", target)) == {"zephyr", "espidf"}


def test_the_isr_runs_what_never_waits_and_notifies_a_task_for_the_rest() -> None:
    files = _files()
    main = files["main/main.c"]
    isr = _body(main, "static void IRAM_ATTR button_isr(void *arg)")
    assert "press_toggles_react(&woken);" in isr and "press_gives_react(&woken);" in isr
    assert isr.index("press_gives_react(&woken);") < isr.index("portYIELD_FROM_ISR(woken);")
    toggle = _body(main, "static void IRAM_ATTR press_toggles_react(BaseType_t *woken)")
    assert "gpio_set_level(GPIO_NUM_2, press_toggles_level ^ 0U) == ESP_OK" in toggle
    give = _body(main, "static void IRAM_ATTR press_gives_react(BaseType_t *woken)")
    assert "xSemaphoreGiveFromISR(presses_sem, woken) == pdTRUE" in give
    deferred = _body(main, "static void IRAM_ATTR tick_log_react(BaseType_t *woken)")
    assert "vTaskNotifyGiveFromISR(tick_log_task, woken);" in deferred and "printf" not in deferred
    task = _body(main, "static void tick_log_react_task(void *arg)")
    assert "ulTaskNotifyTake(pdTRUE, portMAX_DELAY)" in task and "printf(" in task
    timer = _body(main, "static void IRAM_ATTR tick_on_alarm(void *arg)")
    assert "ticks_react(&woken);" in timer and "esp_timer_isr_dispatch_need_yield();" in timer
    # Everything a reaction touches exists before the first interrupt is attached.
    attach = main.index("gpio_isr_handler_add(GPIO_NUM_0, button_isr, NULL)")
    assert main.index("presses_sem = xSemaphoreCreateCounting") < attach
    assert main.index("tick_log_task = start_task(") < attach
    assert main.index("ESP_ERROR_CHECK(gpio_config(&press_toggles_io));") < attach
    assert "CONFIG_GPIO_CTRL_FUNC_IN_IRAM=y" in files["sdkconfig.defaults"]


def test_the_verifier_refuses_a_reaction_that_prints_in_the_isr() -> None:
    files = _files()
    main = files["main/main.c"]
    start = main.index("static void IRAM_ATTR ticks_react(BaseType_t *woken)\n{")
    end = main.index("\n}\n", start) + 3
    inlined = 'static void IRAM_ATTR ticks_react(BaseType_t *woken)\n{\n    (void)woken;\n    printf("tick\\n");\n}\n'
    bad = {**files, "main/main.c": main[:start] + inlined + main[end:]}
    codes = {e.code for e in verify_sources(bad, "espidf", load_target("esp32s3")).evidence}
    assert "E_ISR_LOGGING" in codes


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("kernel_notify_take_in_isr", "E_ISR_UNSAFE_CALL"),
        ("kernel_send_front_from_isr_unchecked", "E_UNCHECKED_RETURN"),
    ],
)
def test_espidf_kernel_rules(name: str, code: str) -> None:
    text = (BAD / f"{name}.c").read_text()
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if f"expect: {code}" in t)
    files = {"main/main.c": text, "sdkconfig.defaults": (BAD / "support" / "sdkconfig.defaults").read_text()}
    result = verify_sources(files, "espidf", None)
    assert [(e.code, e.location.split(" ")[0]) for e in result.evidence] == [(code, f"main/main.c:{line}")]


def test_every_espidf_kernel_bad_source_is_exercised() -> None:
    rules = {"kernel_notify_take_in_isr", "kernel_send_front_from_isr_unchecked"}
    assert {p.stem for p in BAD.glob("kernel_*.c")} == rules
