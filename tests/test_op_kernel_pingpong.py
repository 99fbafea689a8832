"""``ping_pong``: a double buffer an ISR fills and a thread drains, ownership moved by an atomic flag.

Seeded violations (the consumer's processing time against the ISR's fill time, the ISR context, the
consumer thread, the RAM budget) name the objects and every relaxation validates once applied; the Zephyr
and ESP-IDF realizations hand a half over only through the atomic flag and test every wait.
"""

from __future__ import annotations

from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.resources import data_dir

THREADS = {"threads": [{"name": "dsp", "priority": 4, "stack_bytes": 4096}]}
TICK = {"op": "timer_periodic", "name": "tick", "period_ms": 2}
PP = {"op": "ping_pong", "name": "pp", "source": "tick", "event": "expiry", "consumer": "dsp", "half_items": 16,
      "process_ms": 10, "wait_timeout_ms": 100}  # fmt: skip
EXAMPLE = data_dir("examples") / "kernel_ping_pong.yaml"


def _plan(*ops: dict[str, Any], target: str = "nrf52840", framework: str = "zephyr") -> dict[str, Any]:
    return {"target": target, "framework": framework, "resources": THREADS, "operations": list(ops)}


SEEDED = [
    ("processing-beyond-fill", _plan(TICK, {**PP, "process_ms": 40}), "E_PINGPONG_OVERRUN", {"pp", "dsp", "tick"}),
    ("processing-beyond-fill-espidf", _plan(TICK, {**PP, "process_ms": 32}, target="esp32s3", framework="espidf"),
     "E_PINGPONG_OVERRUN", {"pp", "dsp", "tick"}),
    ("thread-event", _plan(TICK, {"op": "work_item", "name": "job"}, {**PP, "source": "job", "event": "done"}),
     "E_REACTION_CONTEXT", {"pp", "job"}),
    ("deferred", _plan(TICK, {**PP, "context": "deferred"}), "E_REACTION_CONTEXT", {"pp", "tick"}),
    ("unknown-consumer", _plan(TICK, {**PP, "consumer": "fft"}), "E_UNKNOWN_RESOURCE", {"fft"}),
    ("halves-beyond-ram", {**_plan(TICK, {**PP, "half_items": 4096, "process_ms": None}, target="stm32f407"),
                           "resources": {"threads": [{"name": "dsp", "priority": 4, "stack_bytes": 98304}]}},
     "E_RAM_BUDGET", {"pp", "SRAM1"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_ping_pong_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert broken == []


def test_overrun_states_both_times_in_ms_and_the_half_that_fits() -> None:
    evidence, _ = seeded(_plan(TICK, {**PP, "process_ms": 40}), "E_PINGPONG_OVERRUN")
    assert {(m.name, m.value, m.unit) for m in evidence.magnitudes} == {("process", 40, "ms"), ("fill", 32.0, "ms")}
    assert [r.description for r in evidence.relaxations] == ["21 samples per half"]


def test_zephyr_hands_a_half_over_only_through_the_atomic_flag() -> None:
    main = lower(load_plan(EXAMPLE), load_target("nrf52840"), "zephyr").files["src/main.c"]
    isr = main[main.index("static void app_frames_react(void)\n{") :]
    isr = isr[: isr.index("\n}\n")]
    assert isr.index("if (!atomic_cas(&app_frames_held, 0, 1)) {") < isr.index("atomic_set(&app_frames_handed")
    assert isr.index("atomic_set(&app_frames_handed") < isr.index("k_sem_give(&app_frames_ready);")
    assert "k_sem_take(&app_frames_ready, K_MSEC(200));" in main and "atomic_clear(&app_frames_held);" in main
    timer = main[main.index("static void app_sampler_expiry") :]
    assert "app_frames_react();" in timer[: timer.index("\n}\n")]


def test_espidf_uses_release_acquire_and_the_isr_give() -> None:
    main = lower(load_plan(EXAMPLE), load_target("esp32s3"), "espidf").files["main/main.c"]
    assert "atomic_compare_exchange_strong_explicit(&frames_held, &idle, 1U, memory_order_acq_rel" in main
    assert "atomic_store_explicit(&frames_handed, fill, memory_order_release);" in main
    assert "atomic_load_explicit(&frames_handed, memory_order_acquire)" in main
    assert "xSemaphoreGiveFromISR(frames_ready, woken) != pdTRUE" in main
    assert main.index("frames_ready = xSemaphoreCreateBinary();") < main.index("esp_timer_start_periodic(sampler_timer")
