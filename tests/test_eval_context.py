"""The source-writing baselines' SDK context comes from the task statement, never from the reference.

The proof is a real process in which the reference cannot be reached: every module that can produce a
reference solution (the pipeline, the lowerings, the task suite with its reference plans) is blocked from
import; the selector still produces exactly the headers the interfaces show.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.tasks import get_task
from rac_fw.domains.firmware.verify.static.context import framework_catalog
from rac_fw.eval.interfaces import get_interface
from rac_fw.eval.interfaces.sdk_context import select_headers
from rac_fw.eval.interfaces.source import relevant_headers

TASKS = ["fw/dma/copy_1k@stm32h743-zephyr", "fw/dma/copy_1k@esp32s3-espidf", "fw/uart/hello@stm32f407-hal",
         "fw/storage/raw_flash_readback@nrf52840-zephyr"]

BLOCKED = textwrap.dedent("""
    import importlib.abc, json, sys
    BLOCKED = ("rac_fw.domains.firmware.pipeline", "rac_fw.domains.firmware.lower", "rac_fw.domains.firmware.tasks",
               "rac_fw.eval.interfaces.source")

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.startswith(BLOCKED):
                raise ImportError(f"{name} is blocked: the selector must not reach a reference solution")
            return None

    sys.meta_path.insert(0, Block())
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.verify.static.context import framework_catalog
    from rac_fw.eval.interfaces.sdk_context import select_headers

    out = {}
    for task_id, requirement, framework, target in json.loads(sys.stdin.read()):
        facts = load_target(target)
        out[task_id] = select_headers(requirement, framework, facts, framework_catalog(framework, {}, facts))
    assert not any(m.startswith(BLOCKED) for m in sys.modules)
    print(json.dumps(out))
""")


def test_the_selector_cannot_read_the_reference() -> None:
    statements = []
    for task_id in TASKS:
        task = get_task(task_id)
        assert task is not None
        statements.append([task_id, task.requirement, task.framework, task.target])
    blocked = subprocess.run([sys.executable, "-c", BLOCKED], input=json.dumps(statements), capture_output=True,
                             text=True, timeout=300)
    assert blocked.returncode == 0, blocked.stderr[-2000:]
    chosen = json.loads(blocked.stdout)
    for task_id in TASKS:
        assert chosen[task_id] == relevant_headers(task_id), task_id


def test_the_statement_selects_what_the_task_needs() -> None:
    dma = relevant_headers("fw/dma/copy_1k@stm32h743-zephyr")
    assert "zephyr/drivers/dma.h" in dma and "zephyr/cache.h" in dma
    esp = relevant_headers("fw/dma/copy_1k@esp32s3-espidf")
    assert any("dma_start" in names or "esp_async_memcpy" in names for names in [*dma.values(), *esp.values()])
    # an API the statement names is shown with its header
    target = load_target("stm32f407")
    named = select_headers("Compare the buffers with memcmp after HAL_UART_Transmit.", "hal", target,
                           framework_catalog("hal", {}, target))
    assert any("HAL_UART_Transmit" in names for names in named.values())
    # big headers are narrowed to what the statement is about (the H7 RCC header has over 2,000 names)
    hello = relevant_headers("fw/uart/hello@stm32h743-hal")
    assert 0 < len(hello["stm32h7xx_hal_rcc.h"]) < 400


def test_the_baseline_prompt_carries_no_reference_code() -> None:
    interface = get_interface("firmware", "rawsdk")
    _system, user = interface.prompt("fw/dma/copy_1k@stm32h743-zephyr")
    reference = interface.reference("fw/dma/copy_1k@stm32h743-zephyr").arguments["files"]["src/main.c"]
    assert "app_copy_src" in reference and "app_copy_src" not in user
    assert "dma_start" in user  # the API the requirement needs is in the context
