"""``msg_queue``: FIFO/LIFO messages between two threads on Zephyr (k_msgq, k_lifo of slab items) and
FreeRTOS (one queue, sent to the back or the front).

Seeded violations name the objects and every relaxation validates once applied; the realizations state
the plan's send and receive timeouts and test every result; the verifier knows the FIFO/LIFO rules
(a bad source each, in ``test_op_kernel_verifier.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from seeded_kernel import seeded

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.resources import data_dir

THREADS = {
    "threads": [{"name": "a", "priority": 5, "stack_bytes": 4096}, {"name": "b", "priority": 6, "stack_bytes": 4096}]
}
QUEUE = {"op": "msg_queue", "name": "q", "producer": "a", "consumer": "b", "depth": 8, "item_bytes": 16,
         "put_timeout_ms": 10, "get_timeout_ms": "forever"}  # fmt: skip


def _plan(*ops: dict[str, Any], target: str = "nrf52840", framework: str = "zephyr") -> dict[str, Any]:
    return {"target": target, "framework": framework, "resources": THREADS, "operations": list(ops)}


SEEDED = [
    ("same-thread", _plan({**QUEUE, "consumer": "a"}), "E_QUEUE_SAME_THREAD", {"q", "a"}),
    ("same-thread-espidf", _plan({**QUEUE, "consumer": "a"}, target="esp32s3", framework="espidf"),
     "E_QUEUE_SAME_THREAD", {"q", "a"}),
    ("unknown-consumer", _plan({**QUEUE, "consumer": "c"}), "E_UNKNOWN_RESOURCE", {"c"}),
    ("ring-beyond-ram", _plan({**QUEUE, "depth": 1024, "item_bytes": 1024}), "E_RAM_BUDGET", {"q", "RAM"}),
    ("lifo-pool-beyond-ram", _plan({**QUEUE, "order": "lifo", "depth": 1024, "item_bytes": 1024}),
     "E_RAM_BUDGET", {"q", "RAM"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_queue_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str, objects: set[str]
) -> None:
    evidence, broken = seeded(plan, code)
    assert objects <= set(evidence.objects), evidence.objects
    assert evidence.location.startswith("operations[0]"), evidence.location
    assert broken == []


def test_the_storage_counts_in_the_ram_budget_with_the_lifo_link() -> None:
    ram = spec("msg_queue").ram
    assert ram is not None
    fifo = parse_plan(_plan(QUEUE)).operations[0]
    lifo = parse_plan(_plan({**QUEUE, "order": "lifo"})).operations[0]
    assert ram(fifo) == (8 * 16, "depth") and ram(lifo) == (8 * (16 + 4), "depth")


def test_zephyr_fifo_is_a_msgq_and_lifo_a_lifo_of_slab_items_with_the_plans_timeouts() -> None:
    plan = load_plan(data_dir("examples") / "kernel_queues.yaml")
    main = lower(plan, load_target("nrf52840"), "zephyr").files["src/main.c"]
    assert "K_MSGQ_DEFINE(app_telemetry_q, 16, 8, 4);" in main
    assert "k_msgq_put(&app_telemetry_q, app_telemetry_msg, K_MSEC(10)) == 0" in main
    assert "k_msgq_get(&app_telemetry_q, app_telemetry_msg, K_MSEC(500))" in main
    assert "} else if (app_telemetry_err == -EAGAIN) {" in main
    assert "K_LIFO_DEFINE(app_commands_q);" in main
    assert "K_MEM_SLAB_DEFINE_STATIC(app_commands_pool, sizeof(struct app_commands_item), 4, 4);" in main
    assert "k_mem_slab_alloc(&app_commands_pool, &app_commands_mem, K_NO_WAIT) == 0" in main
    got = main.index("k_lifo_get(&app_commands_q, K_FOREVER);")
    assert main.index("if (app_commands_item != NULL) {", got) < main.index("k_mem_slab_free(&app_commands_pool", got)


def test_freertos_sends_to_the_back_for_fifo_and_to_the_front_for_lifo() -> None:
    plan = load_plan(data_dir("examples") / "kernel_queues.yaml")
    main = lower(plan, load_target("esp32s3"), "espidf").files["main/main.c"]
    assert "telemetry_queue = xQueueCreate(8, 16);" in main and "commands_queue = xQueueCreate(4, 8);" in main
    assert "xQueueSendToBack(telemetry_queue, msg, pdMS_TO_TICKS(10)) == pdPASS" in main
    assert "xQueueSendToFront(commands_queue, msg, 0) == pdPASS" in main
    assert "xQueueReceive(telemetry_queue, msg, pdMS_TO_TICKS(500)) == pdTRUE" in main
    assert "xQueueReceive(commands_queue, msg, portMAX_DELAY) == pdTRUE" in main
    # Created before any task starts (the early part of app_main), reported once created.
    assert main.index("commands_queue = xQueueCreate") < main.index('rac_ok("telemetry")')
