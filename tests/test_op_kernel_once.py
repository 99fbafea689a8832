"""``once_init``: N threads share an initialiser that runs exactly once (Zephyr atomic_cas state machine
with a turnstile semaphore, ESP-IDF C11 atomics with an event-group bit). Seeded violations name the
objects and every relaxation validates once applied; the realizations initialise under the
compare-and-swap, wait with the plan's timeout and report only after every thread has passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.resources import data_dir

EXAMPLE = data_dir("examples") / "kernel_once.yaml"
NAMES = [f"t{i}" for i in range(4)]
THREADS = {"threads": [{"name": n, "priority": 5, "stack_bytes": 4096} for n in NAMES]}
ONCE = {"op": "once_init", "name": "init", "threads": ["t0", "t1"], "wait_timeout_ms": 100}


def _plan(*ops: dict[str, Any], target: str = "nrf52840", framework: str = "zephyr") -> dict[str, Any]:
    return {"target": target, "framework": framework, "resources": THREADS, "operations": list(ops)}


SEEDED = [
    ("one-caller", _plan({**ONCE, "threads": ["t0"]}), "E_ONCE_PARTIES", {"init", "t0"}),
    ("a-thread-twice", _plan({**ONCE, "threads": ["t0", "t1", "t0"]}), "E_ONCE_PARTIES", {"init"}),
    ("one-caller-espidf", _plan({**ONCE, "threads": ["t0"]}, target="esp32s3", framework="espidf"),
     "E_ONCE_PARTIES", {"init", "t0"}),
    ("unknown-caller", _plan({**ONCE, "threads": ["t0", "nobody"]}), "E_UNKNOWN_RESOURCE", {"nobody"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_once_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert broken == []


def _body(main: str, signature: str) -> str:
    body = main[main.index(signature) :]
    return body[: body.index("\n}\n")]


def test_zephyr_initialises_under_the_cas_and_main_waits_for_every_thread() -> None:
    main = lower(load_plan(EXAMPLE), load_target("nrf52840"), "zephyr").files["src/main.c"]
    once = _body(main, "static int app_table_setup_once(void)")
    cas = once.index("atomic_cas(&app_table_setup_state, APP_TABLE_SETUP_IDLE, APP_TABLE_SETUP_RUNNING)")
    assert cas < once.index("app_table_setup_init();") < once.index("atomic_set(&app_table_setup_state")
    assert "k_sem_take(&app_table_setup_open, K_MSEC(500));" in once
    assert once.count("k_sem_give(&app_table_setup_open);") == 2  # opened once, given back by each waiter
    assert "K_SEM_DEFINE(app_table_setup_passed, 0, 3);" in main
    step = _body(main, "static int app_table_setup_step(void)")
    assert "i < 3U" in step and "k_sem_take(&app_table_setup_passed, K_MSEC(500));" in step
    assert "runs == 1 ? 0 : -EIO" in step
    assert main.count("(void)app_table_setup_once();") == 3
    assert "static uint32_t app_table_setup_table[32];" in main
    assert "err = app_table_setup_step();" in main  # reported once, from main, after all threads passed


def test_espidf_initialises_once_and_the_last_task_reports() -> None:
    main = lower(load_plan(EXAMPLE), load_target("esp32s3"), "espidf").files["main/main.c"]
    once = _body(main, "static void table_setup_once(void)")
    assert once.index("atomic_compare_exchange_strong(&table_setup_state, &idle, 1)") < once.index(
        "atomic_fetch_add(&table_setup_runs, 1);"
    )
    assert "xEventGroupWaitBits(table_setup_group, TABLE_SETUP_DONE_BIT, pdFALSE, pdTRUE, pdMS_TO_TICKS(500));" in once
    assert "atomic_fetch_add(&table_setup_passed, 1) + 1 == 3" in once and "rac_ok(" in once
    assert main.count("    table_setup_once();") == 3
    assert "table_setup_group = xEventGroupCreate();" in main


def test_forever_waits_without_bound_on_espidf() -> None:
    plan = load_plan(Path(__file__).parent / "plans" / "esp32s3_espidf_kernel_once.yaml")
    main = lower(plan, load_target("esp32s3"), "espidf").files["main/main.c"]
    assert "CALIB_DONE_BIT, pdFALSE, pdTRUE, portMAX_DELAY);" in main
