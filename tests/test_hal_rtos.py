"""STM32 HAL with FreeRTOS through CMSIS-RTOS2: thread and kernel operations lower on the F407 and H743.

The RTOS is chosen by the plan's operations (a ``hal`` realization rendering from ``templates/hal/rtos*``),
so these tests check both directions: a kernel plan gets the CMSIS-RTOS2 application (objects and threads
between ``osKernelInitialize`` and ``osKernelStart``, the HAL time base on the chip facts' timer, a
``FreeRTOSConfig.h`` whose numbers are the facts'), and a plan without such operations stays the
super-loop it was. Every tree is judged by the independent verifier.
"""

from __future__ import annotations

import re

import pytest

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import clock_hz
from rac_fw.domains.firmware.lower import Lowered, LoweringError, lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

TARGETS = ("stm32f407", "stm32h743")
EXAMPLE = data_dir("examples") / "hal_rtos_kernel.yaml"


def _lowered(target_id: str, data: dict | None = None) -> tuple[Target, Lowered]:
    plan = (
        load_plan(EXAMPLE).model_copy(update={"target": target_id})
        if data is None
        else parse_plan({"target": target_id, "framework": "hal", **data})
    )
    target = load_target(target_id)
    assert check(plan, target, "hal") == []
    return target, lower(plan, target, "hal")


def _threads(stack: int) -> dict:
    return {
        "resources": {"threads": [{"name": "worker", "priority": 4, "stack_bytes": stack}]},
        "operations": [
            {"op": "semaphore", "name": "ready", "taker": "worker", "initial": 1, "take_timeout_ms": "forever"}
        ],
    }


@pytest.mark.parametrize("target_id", TARGETS)
def test_kernel_plan_is_a_cmsis_rtos2_application_in_the_right_order(target_id: str) -> None:
    target, low = _lowered(target_id)
    prefix = target.hal.family.lower() + "xx" if target.hal else ""
    assert {"Core/Inc/FreeRTOSConfig.h", f"Core/Src/{prefix}_hal_timebase_tim.c"} <= set(low.files)
    main = low.files["Core/Src/main.c"]
    assert '#include "cmsis_os2.h"' in main
    start = main.index("osKernelInitialize()")
    creations = [
        m.start() for m in re.finditer(r"\bos(Thread|MessageQueue|Semaphore|Mutex|Timer|EventFlags)New\(", main)
    ]
    begin = main.index("\nint main(void)")
    in_main = [c for c in creations if begin < c < main.index("\nstatic void rac_loop(void *argument)\n{")]
    assert in_main and all(start < c < main.index("osKernelStart()") for c in in_main)
    # Every plan thread role is created with the plan's stack; the super-loop became the thread rac_loop.
    assert main.count("osThreadNew(") == 2 + 2 + 2 + 2 + 1  # semaphore, flags, mutex, queue roles + rac_loop
    assert ".stack_size = 2048U" in main and "osDelay(1U)" in main
    # The plan's timeouts, in ticks at the 1 kHz tick; the kernel timer is an osTimer, not a hardware one.
    assert "osSemaphoreAcquire(items_sem, 250U)" in main and "osMutexAcquire(config_lock_mutex, 20U)" in main
    assert "osTimerNew(heartbeat_expired, osTimerPeriodic" in main and "osTimerStart(heartbeat_timer, 500U)" in main
    assert "HAL_TIM_Base_Start_IT" not in main
    verdict = verify_sources(low.files, "hal", target)
    assert verdict.ok, [(e.code, e.location, e.message) for e in verdict.evidence]


@pytest.mark.parametrize("target_id", TARGETS)
def test_the_hal_time_base_moves_to_the_facts_timer(target_id: str) -> None:
    target, low = _lowered(target_id)
    assert target.hal is not None and target.hal.rtos is not None
    timebase = target.hal.rtos.timebase
    prefix = target.hal.family.lower() + "xx"
    it = low.files[f"Core/Src/{prefix}_it.c"]
    assert "void SysTick_Handler(void)\n{" not in it, "SysTick belongs to the kernel (cmsis_os2.c)"
    irq = next(i.name for i in target.peripherals[timebase].interrupts)
    assert f"void {irq}_IRQHandler(void)" in it and f"HAL_TIM_IRQHandler(&h{timebase.lower()})" in it
    source = low.files[f"Core/Src/{prefix}_hal_timebase_tim.c"]
    psc = int(re.search(r"Init\.Prescaler = (\d+)U", source).group(1))  # type: ignore[union-attr]
    arr = int(re.search(r"Init\.Period = (\d+)U", source).group(1))  # type: ignore[union-attr]
    timer_clock = clock_hz(target, target.timers[timebase].clock or "", "hal")
    assert timer_clock and timer_clock / ((psc + 1) * (arr + 1)) == 1000, "a 1 ms HAL tick"
    assert f"if (htim->Instance == {timebase}) {{\n        HAL_IncTick();" in low.files["Core/Src/main.c"]
    notes = " ".join(low.receipt.notes)
    assert "chosen because operations[0] (semaphore)" in notes and f"HAL time base: {timebase}" in notes


@pytest.mark.parametrize("target_id", TARGETS)
def test_freertos_configuration_comes_from_the_facts(target_id: str) -> None:
    target, low = _lowered(target_id)
    config = low.files["Core/Inc/FreeRTOSConfig.h"]

    def value(name: str) -> int:
        return int(re.search(rf"#define {name} \(?(?:\(\w+\))?(\d+)", config).group(1))  # type: ignore[union-attr]

    core = "CPU" if target.clock("CPU") is not None else "HCLK"
    assert value("configCPU_CLOCK_HZ") == clock_hz(target, core, "hal")
    assert target.nvic is not None and target.hal is not None and target.hal.rtos is not None
    assert value("configPRIO_BITS") == target.nvic.priority_bits
    assert value("configLIBRARY_LOWEST_INTERRUPT_PRIORITY") == target.nvic.levels - 1
    assert value("configLIBRARY_MAX_SYSCALL_INTERRUPT_PRIORITY") == target.hal.rtos.max_syscall_priority
    assert value("configMAX_PRIORITIES") == 56, "CMSIS-RTOS2 maps osPriority_t onto 56 FreeRTOS priorities"
    assert f'#define CMSIS_device_header "{target.hal.family.lower()}xx.h"' in config
    # The heap follows the threads the plan creates: 8 KiB more stack, at least 8 KiB more heap.
    _, small = _lowered(target_id, _threads(1024))
    _, large = _lowered(target_id, _threads(9216))
    grow = [
        re.search(r"configTOTAL_HEAP_SIZE \(\(size_t\)(\d+)U\)", lowered.files["Core/Inc/FreeRTOSConfig.h"])
        for lowered in (small, large)
    ]
    assert grow[0] and grow[1] and int(grow[1].group(1)) - int(grow[0].group(1)) >= 8192


@pytest.mark.parametrize("target_id", TARGETS)
def test_a_plan_without_kernel_operations_stays_a_super_loop(target_id: str) -> None:
    plan = load_plan(data_dir("examples") / "gpio_blink.yaml").model_copy(
        update={"target": target_id, "framework": "hal"}
    )
    target = load_target(target_id)
    low = lower(plan, target, "hal")
    assert "Core/Inc/FreeRTOSConfig.h" not in low.files
    assert not any("cmsis_os2" in text or "osKernel" in text for text in low.files.values())
    assert any("void SysTick_Handler(void)\n{\n    HAL_IncTick();" in text for text in low.files.values())
    assert not any(note.startswith("RTOS") for note in low.receipt.notes)


def test_kernel_operations_are_realized_on_hal_exactly_where_the_facts_say_how() -> None:
    for kind in ("producer_consumer", "shared_state_mutex", "lock_order", "semaphore", "mutex_lock", "event_flags"):
        for target_id in TARGETS:
            assert realizes("hal", kind, load_target(target_id)), (kind, target_id)
    assert not realizes("hal", "work_item", load_target("stm32f407")), "no hal realization declared"


def test_the_time_base_timer_cannot_be_claimed_and_kernel_timers_avoid_it() -> None:
    data = _threads(1024)
    data["operations"].append({"op": "timer_periodic", "name": "tick", "period_ms": 10, "source": "TIM6"})
    plan = parse_plan({"target": "stm32f407", "framework": "hal", **data})
    with pytest.raises(LoweringError) as raised:
        lower(plan, load_target("stm32f407"), "hal")
    assert raised.value.evidence[0].code == "E_TARGET_UNSUPPORTED"
    assert "TIM6 is the HAL time base" in raised.value.evidence[0].message
    assert raised.value.evidence[0].location == "operations[1]"


def test_lock_order_and_shared_state_share_named_mutexes() -> None:
    plan = load_plan(data_dir("examples") / "threading.yaml").model_copy(
        update={"target": "stm32h743", "framework": "hal"}
    )
    target = load_target("stm32h743")
    assert check(plan, target, "hal") == []
    main = lower(plan, target, "hal").files["Core/Src/main.c"]
    # One mutex per lock name, created once before any thread; lock_order nests them outermost first.
    assert main.count("state_lock = osMutexNew(&state_lock_attr);") == 1
    assert main.count("journal_lock = osMutexNew(&journal_lock_attr);") == 1
    outer = main.index("if (osMutexAcquire(state_lock, 50U) == osOK) {\n            if (osMutexAcquire(journal_lock")
    assert outer > main.index("static void fast_transfer_thread(void *argument)\n{")


def test_a_heap_beyond_the_ram_is_evidence_not_a_crash() -> None:
    data = _threads(1024)
    data["resources"]["threads"] = [{"name": f"t{i}", "priority": 3, "stack_bytes": 65536} for i in range(4)]
    data["operations"] = [
        {"op": "mutex_lock", "name": "big", "threads": [f"t{i}" for i in range(4)], "lock_timeout_ms": 10}
    ]
    result = run_plan(parse_plan({"target": "stm32f407", "framework": "hal", **data}))
    assert result.status is Status.INVALID
    assert result.evidence and {e.code for e in result.evidence} <= {"E_RAM_BUDGET", "E_TARGET_UNSUPPORTED"}
