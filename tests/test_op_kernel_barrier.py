"""``barrier``: N threads meet every round (Zephyr mutex + condvar generation counter, FreeRTOS
xEventGroupSync). Seeded violations name the objects and every relaxation validates once applied; the
realizations wait with the plan's timeout and withdraw a timed-out arrival."""

from __future__ import annotations

from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.resources import data_dir

EXAMPLE = data_dir("examples") / "kernel_barrier.yaml"
NAMES = [f"t{i}" for i in range(4)]
THREADS = {"threads": [{"name": n, "priority": 5, "stack_bytes": 4096} for n in NAMES]}
BAR = {"op": "barrier", "name": "sync", "threads": ["t0", "t1"], "wait_timeout_ms": 100}


def _plan(*ops: dict[str, Any], target: str = "nrf52840", framework: str = "zephyr") -> dict[str, Any]:
    return {"target": target, "framework": framework, "resources": THREADS, "operations": list(ops)}


SEEDED = [
    ("one-party", _plan({**BAR, "threads": ["t0"]}), "E_BARRIER_PARTIES", {"sync", "t0"}),
    ("a-thread-twice", _plan({**BAR, "threads": ["t0", "t1", "t0"]}), "E_BARRIER_PARTIES", {"sync"}),
    ("one-party-espidf", _plan({**BAR, "threads": ["t0"]}, target="esp32s3", framework="espidf"),
     "E_BARRIER_PARTIES", {"sync", "t0"}),
    ("unknown-party", _plan({**BAR, "threads": ["t0", "nobody"]}), "E_UNKNOWN_RESOURCE", {"nobody"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_barrier_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert broken == []


def test_zephyr_counts_generations_under_the_mutex_and_withdraws_on_timeout() -> None:
    main = lower(load_plan(EXAMPLE), load_target("nrf52840"), "zephyr").files["src/main.c"]
    meet = main[main.index("static int app_frame_sync_meet(void)") :]
    meet = meet[: meet.index("\n}\n")]
    assert "k_condvar_wait(&app_frame_sync_cv, &app_frame_sync_lock, K_MSEC(500));" in meet
    assert "k_condvar_broadcast(&app_frame_sync_cv);" in meet and "app_frame_sync_arrived--;" in meet
    assert meet.index("k_mutex_lock(") < meet.index("k_mutex_unlock(")
    assert main.count("app_frame_sync_meet();") == 3


def test_freertos_meets_with_one_event_group_bit_per_thread() -> None:
    main = lower(load_plan(EXAMPLE), load_target("esp32s3"), "espidf").files["main/main.c"]
    for bit in range(3):
        assert f"xEventGroupSync(frame_sync_group, 1U << {bit}, 0x7U, pdMS_TO_TICKS(500));" in main
        assert f"xEventGroupClearBits(frame_sync_group, 1U << {bit}); /* withdraw */" in main
    assert '#include "freertos/event_groups.h"' in main
