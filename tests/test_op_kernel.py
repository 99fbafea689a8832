"""Kernel objects (semaphore, work_item) and watchdog supervision (task_watchdog) as op specs.

Each obligation has a seeded violation whose evidence names the objects (with magnitudes in units
where there is one) and whose every relaxation validates once applied; the Zephyr realization states
the plan's timeouts, gates the supervised threads on the channels, and checks every return.
"""

from __future__ import annotations

from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.resources import data_dir

THREADS = {
    "threads": [{"name": "a", "priority": 5, "stack_bytes": 1024}, {"name": "b", "priority": 6, "stack_bytes": 1024}]
}


def _plan(*ops: dict[str, Any], target: str = "nrf52840") -> dict[str, Any]:
    return {"target": target, "framework": "zephyr", "resources": THREADS, "operations": list(ops)}


SEM = {"op": "semaphore", "name": "sig", "taker": "a", "giver": "b", "take_timeout_ms": 100}
FLAGS = {"op": "event_flags", "name": "st", "flags": ["x", "y"], "waiter": "a", "setter": "b", "timeout_ms": 500}
BIG = {
    "threads": [{"name": "a", "priority": 5, "stack_bytes": 4096}, {"name": "b", "priority": 6, "stack_bytes": 4096}]
}
MUTEX = {"op": "mutex_lock", "name": "cfg", "threads": ["a", "b"], "lock_timeout_ms": 5, "hold_ms": 10}
TICK = {"op": "timer_periodic", "name": "tick", "period_ms": 50}
SPIN = {"op": "spinlock_state", "name": "shared", "source": "tick", "event": "expiry", "thread": "a"}
LAT = {"op": "event_latency", "name": "lat", "source": "tick", "event": "expiry", "deadline_us": 500}
TW = {"op": "task_watchdog", "name": "wd", "threads": ["a"], "timeout_ms": 1000, "feed_interval_ms": 200}

SEEDED = [
    ("sem-initial-above-limit", _plan({**SEM, "initial": 3, "limit": 1}), "E_SEMAPHORE_COUNT", {"sig"}, {"count"}),
    ("sem-never-given", _plan({**SEM, "giver": None}), "E_SEMAPHORE_NEVER_GIVEN", {"sig", "a"}, set()),
    ("sem-unknown-thread", _plan({**SEM, "taker": "c"}), "E_UNKNOWN_RESOURCE", {"c"}, set()),
    ("work-never-submitted", _plan({"op": "work_item", "name": "job", "submit": "by_reactions"}),
     "E_WORK_NEVER_SUBMITTED", {"job"}, set()),
    ("work-delay-beyond-period", _plan({"op": "work_item", "name": "job", "submit": "periodic", "period_ms": 100,
                                        "delay_ms": 150}), "E_WORK_PERIOD", {"job"}, {"ms"}),
    ("work-queue-thread-unknown", _plan({"op": "work_item", "name": "job", "queue_thread": "c"}),
     "E_UNKNOWN_RESOURCE", {"c"}, set()),
    ("work-queue-thread-stack", {**_plan({"op": "work_item", "name": "job", "queue_thread": "a"}),
                                 "resources": {"threads": [{"name": "a", "priority": 5, "stack_bytes": 256}]}},
     "E_STACK_SIZE", {"a"}, {"bytes"}),
    ("tw-feed-too-slow", _plan({**TW, "feed_interval_ms": 900}), "E_WATCHDOG_WINDOW", {"wd"}, {"ms"}),
    ("tw-thread-waits-forever", _plan(TW, {**SEM, "take_timeout_ms": "forever"}), "E_WATCHDOG_WINDOW",
     {"a", "sig", "wd"}, {"ms"}),
    ("tw-supervises-nothing", _plan({**TW, "threads": []}), "E_WATCHDOG_WINDOW", {"wd"}, set()),
    ("tw-shares-the-hardware-watchdog", _plan(TW, {"op": "watchdog", "name": "hw", "timeout_ms": 2000,
                                               "feed_interval_ms": 500}), "E_WATCHDOG_SHARED", {"wd", "hw"}, set()),
    ("tw-fallback-without-hardware", _plan({**TW, "hardware_fallback": True}, target="native_sim"),
     "E_TARGET_UNSUPPORTED", {"wd", "native_sim"}, set()),
    ("spinlock-section-too-long", _plan(TICK, {**SPIN, "state_bytes": 256}), "E_CRITICAL_SECTION",
     {"shared", "tick"}, {"bytes"}),
    ("spinlock-unknown-reader", _plan(TICK, {**SPIN, "thread": "c"}), "E_UNKNOWN_RESOURCE", {"c"}, set()),
    ("latency-of-a-thread-event", _plan(TICK, {"op": "work_item", "name": "job"},
                                        {**LAT, "source": "job", "event": "done"}), "E_REACTION_CONTEXT",
     {"lat", "job"}, set()),
    ("latency-in-the-isr", _plan(TICK, {**LAT, "context": "isr"}), "E_REACTION_CONTEXT", {"lat", "tick"}, set()),
    ("flags-beyond-the-event-group", {**_plan({**FLAGS, "flags": [f"f{i}" for i in range(25)]}, target="esp32s3"),
                                      "framework": "espidf", "resources": BIG}, "E_EVENT_BITS", {"st"}, {"bits"}),
    ("flags-never-set", _plan({**FLAGS, "setter": None}), "E_EVENT_NEVER_SET", {"st", "a"}, set()),
    ("mutex-wait-shorter-than-hold", _plan(MUTEX), "E_LOCK_TIMEOUT", {"cfg", "a", "b"}, {"ms"}),
    ("tw-thread-locks-forever", _plan(TW, {**MUTEX, "lock_timeout_ms": "forever"}), "E_WATCHDOG_WINDOW",
     {"a", "cfg", "wd"}, {"ms"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "units"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str], units: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert units <= {m.unit for m in evidence.magnitudes}, evidence.magnitudes
    assert broken == []


def test_timeouts_are_the_plans() -> None:
    bounded = lower(parse_plan(_plan(SEM)), load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert "k_sem_take(&app_sig_sem, K_MSEC(100))" in bounded and "-EAGAIN" in bounded
    forever = lower(parse_plan(_plan({**SEM, "take_timeout_ms": "forever"})), load_target("nrf52840"), "zephyr")
    main = forever.files["src/main.c"]
    assert "k_sem_take(&app_sig_sem, K_FOREVER)" in main and "app_sig_timeouts" not in main
    with pytest.raises(ValueError, match="take_timeout_ms"):
        parse_plan(_plan({k: v for k, v in SEM.items() if k != "take_timeout_ms"}))


def test_work_item_kinds() -> None:
    target = load_target("nrf52840")
    plain = lower(parse_plan(_plan({"op": "work_item", "name": "job"})), target, "zephyr").files["src/main.c"]
    assert "K_WORK_DEFINE(app_job_work, app_job_handler);" in plain and "k_work_submit(&app_job_work)" in plain
    main = lower(load_plan(data_dir("examples") / "kernel_sync.yaml"), target, "zephyr").files["src/main.c"]
    assert "K_WORK_DELAYABLE_DEFINE(app_housekeeping_work" in main
    assert main.index("k_work_queue_start(&app_housekeeping_queue") < main.index("k_work_schedule_for_queue(")


def test_task_watchdog_gates_threads_and_falls_back_where_there_is_hardware() -> None:
    plan = load_plan(data_dir("examples") / "watchdog_supervised.yaml")
    nrf = lower(plan, load_target("nrf52840"), "zephyr")
    main, prj = nrf.files["src/main.c"], nrf.files["prj.conf"]
    assert "task_wdt_init(app_supervisor_hw)" in main and "CONFIG_TASK_WDT_HW_FALLBACK=y" in prj
    assert "CONFIG_TASK_WDT_CHANNELS=3" in prj and "CONFIG_TASK_WDT_MIN_TIMEOUT=1000" in prj
    assert main.count("k_sem_take(&app_supervisor_ready, K_FOREVER);") == 2
    assert "app_supervisor_feed(0U) == 0" in main  # the timer reaction owns channel slot 0
    expired = main[main.index("static void app_supervisor_expired") :]
    assert expired.index("app_expiry_light_react();") < expired.index("sys_reboot(SYS_REBOOT_COLD);")
    native = lower(plan.model_copy(update={"target": "native_sim"}), load_target("native_sim"), "zephyr")
    assert "task_wdt_init(NULL)" in native.files["src/main.c"]
    assert "CONFIG_TASK_WDT_HW_FALLBACK" not in native.files["prj.conf"]


def test_isr_state_under_a_spinlock_and_latency_by_the_cycle_counter() -> None:
    main = lower(load_plan(data_dir("examples") / "kernel_isr_state.yaml"), load_target("stm32f407"), "zephyr")
    text = main.files["src/main.c"]
    expiry = text[text.index("static void app_sample_tick_expiry") : text.index("K_TIMER_DEFINE(app_sample_tick_timer")]
    assert "app_shared_sample_react();" in expiry and "app_tick_latency_react();" in expiry
    assert "static volatile uint32_t app_shared_sample_state[4];" in text
    assert (
        text.count("k_spin_lock(&app_shared_sample_lock)") == 2 == text.count("k_spin_unlock(&app_shared_sample_lock")
    )
    react = text[text.index("static void app_tick_latency_react(void)\n{") :]
    assert react.index("k_cycle_get_32()") < react.index("k_work_submit(&app_tick_latency_work)")
    assert "k_cyc_to_ns_floor64(cycles)" in text and "ns > 2000000ULL" in text


def test_semaphore_on_freertos_under_esp_idf() -> None:
    plan = load_plan(data_dir("examples") / "kernel_semaphore.yaml")
    main = lower(plan, load_target("esp32s3"), "espidf").files["main/main.c"]
    assert "items_sem = xSemaphoreCreateCounting(4, 0);" in main and "if (items_sem == NULL)" in main
    assert "xSemaphoreTake(items_sem, pdMS_TO_TICKS(250)) == pdTRUE" in main
    assert "xSemaphoreGive(items_sem) != pdTRUE" in main and "items_lost++" in main
    forever = plan.model_copy(
        update={"operations": [plan.operations[0].model_copy(update={"take_timeout_ms": "forever"})]}
    )
    text = lower(forever, load_target("esp32s3"), "espidf").files["main/main.c"]
    assert "xSemaphoreTake(items_sem, portMAX_DELAY)" in text and "items_timeouts" not in text


def test_event_flags_on_zephyr_and_freertos() -> None:
    plan = load_plan(data_dir("examples") / "kernel_semaphore.yaml")
    zephyr = lower(
        plan.model_copy(update={"target": "nrf52840", "framework": "zephyr"}), load_target("nrf52840"), "zephyr"
    )
    main = zephyr.files["src/main.c"]
    assert "K_EVENT_DEFINE(app_stages_event);" in main and "CONFIG_EVENTS=y" in zephyr.files["prj.conf"]
    assert "k_event_wait_all(&app_stages_event, 0x3U, false, K_MSEC(1000))" in main
    assert "k_event_clear(&app_stages_event, app_stages_got)" in main
    esp = lower(plan, load_target("esp32s3"), "espidf").files["main/main.c"]
    assert "xEventGroupWaitBits(stages_group, 0x3U, pdTRUE, pdTRUE, pdMS_TO_TICKS(1000))" in esp
    assert "stages_group = xEventGroupCreate();" in esp and "if (stages_group == NULL)" in esp


def test_mutex_lock_states_the_plans_wait() -> None:
    bounded = _plan({**MUTEX, "lock_timeout_ms": 50})
    main = lower(parse_plan(bounded), load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert main.count("k_mutex_lock(&app_cfg_mutex, K_MSEC(50)) != 0") == 2 and "K_MUTEX_DEFINE(app_cfg_mutex);" in main
    assert "app_cfg_err = k_mutex_unlock(&app_cfg_mutex);" in main
    unbounded = _plan({**MUTEX, "lock_timeout_ms": "forever"})
    text = lower(parse_plan(unbounded), load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert "k_mutex_lock(&app_cfg_mutex, K_FOREVER)" in text and "app_cfg_busy" not in text
    esp = lower(load_plan(data_dir("examples") / "kernel_semaphore.yaml"), load_target("esp32s3"), "espidf")
    assert "xSemaphoreTake(config_lock_mutex, pdMS_TO_TICKS(20)) == pdTRUE" in esp.files["main/main.c"]
