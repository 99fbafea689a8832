"""The behaviour layer rendered for STM32 HAL (STM32F407, STM32H743), in the super-loop and under FreeRTOS: clean
C by the static verifier, interrupt vs deferred event triggers (the receipt says which), the software interrupt's
RAM vector table, retained-RAM persistence, the predicted console and the run judge, and plans without a behaviour
untouched.

No STM32Cube tree is part of the project: the generated apps are judged by the independent static verifier (the
HAL API catalogs, ISR rules) and by the run judge on consoles written as the app prints them; they were compiled
by hand against ST's trees (the lead's notes record it).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.query import software_irq
from rac_fw.domains.firmware.pipeline import PlanResult, run_plan
from rac_fw.domains.firmware.plan.behaviour.console import judge
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HAL_TARGETS = ("stm32f407", "stm32h743")
#: Operations whose HAL realization runs kernel threads: with one, the app runs FreeRTOS (CMSIS-RTOS2).
KERNEL: dict[str, Any] = {
    "threads": [{"name": "producer", "priority": 6, "stack_bytes": 1024},
                {"name": "consumer", "priority": 5, "stack_bytes": 1024}],
    "op": {"op": "semaphore", "name": "items", "taker": "consumer", "giver": "producer", "give_period_ms": 100,
           "limit": 4, "initial": 0, "take_timeout_ms": 250},
}  # fmt: skip

#: Software interrupts fired from the boot steps and counted in the handler, an LED toggled there.
SW_IRQ: dict[str, Any] = {
    "framework": "hal",
    "operations": [{"op": "gpio_set", "name": "led", "led": "led0"}, {"op": "sw_irq", "name": "soft"}],
    "behaviour": {
        "vars": [{"name": "hits", "type": "u32", "init": 0}],
        "triggers": [
            {"at": "boot", "do": [{"repeat": {"times": 5, "do": [{"act": "soft.fire"}]}}, {"wait": "10ms"},
                                  {"print": "hits={hits}"}]},
            {"event": "soft.irq", "times": 5, "do": [{"set": {"hits": "hits + 1"}}, {"act": "led.toggle"}]},
        ],
    },
}  # fmt: skip

#: A boot counter in retained RAM, a button edge, a timer, a polled input, an ADC read and a watchdog feed.
RICH: dict[str, Any] = {
    "framework": "hal",
    "resources": {"pins": [{"pin": "PD1", "function": "GPIO", "name": "sw1"}]},
    "operations": [
        {"op": "gpio_set", "name": "led", "led": "led0"},
        {"op": "gpio_input_irq", "name": "button", "button": "sw0", "edge": "falling"},
        {"op": "timer_periodic", "name": "tick", "period_ms": 100},
        {"op": "gpio_read", "name": "sw", "button": "sw1", "interval_ms": 50},
        {"op": "adc_read", "name": "vin", "channel": {"pin": "PA1"}},
        {"op": "watchdog", "name": "wdt", "timeout_ms": 2000, "feed_interval_ms": 500, "report_expiry": "reset_cause"},
    ],
    "behaviour": {
        "vars": [
            {"name": "boots", "type": "u32", "init": 0, "persist": True},
            {"name": "presses", "type": "u32", "init": 0},
            {"name": "mv", "type": "i32", "unit": "mV", "init": 0},
            {"name": "fed", "type": "bool", "init": False},
        ],
        "triggers": [
            {"at": "boot", "do": [{"set": {"boots": "boots + 1"}}, {"print": "boot {boots}"}]},
            {"event": "button.edge", "do": [{"print": "press"}, {"set": {"presses": "presses + 1"}}]},
            {"event": "tick.expiry", "times": 3, "do": [{"act": "led.toggle"}]},
            {"every": "500ms", "times": 2, "do": [
                {"act": {"op": "vin", "action": "read", "into": "mv"}},
                {"act": {"op": "wdt", "action": "feed", "ok": "fed"}}, {"wait": "20ms"},
                {"if": {"cond": "sw.level", "then": [{"print": "sw on"}], "else": [{"print": "sw off"}]}},
                {"print": "mv={mv} presses={presses} fed={fed}"},
            ]},
        ],
    },
}  # fmt: skip


def _plan(base: dict[str, Any], target: str, rtos: bool = False) -> dict[str, Any]:
    plan = copy.deepcopy(base)
    plan["target"] = target
    if target == "stm32h743":  # PA1 is the Nucleo's ETH_REF_CLK
        for op in plan["operations"]:
            if op["op"] == "adc_read":
                op["channel"] = {"pin": "PC0"}
    if rtos:
        plan.setdefault("resources", {})["threads"] = KERNEL["threads"]
        plan["operations"].append(KERNEL["op"])
    return plan


def _lowered(plan: dict[str, Any] | Path, **kw: Any) -> PlanResult:
    result = run_plan(plan, **kw)
    assert result.status is Status.PASS, [f"{e.code} {e.location}: {e.message}" for e in result.evidence]
    assert result.lowered is not None
    return result


def _clean(result: PlanResult) -> dict[str, str]:
    """The lowered files, after the independent verifier found nothing in them."""
    assert result.lowered is not None
    files = dict(result.lowered.files)
    found = verify_sources(files, "hal", load_target(result.target)).evidence
    assert not found, [f"{e.code} {e.location}: {e.message}" for e in found]
    return files


def _notes(result: PlanResult) -> list[str]:
    assert result.lowered is not None
    return list(result.lowered.receipt.notes)


def _lines(result: PlanResult) -> list[Any]:
    assert result.lowered is not None
    return [t.get("line", t) for t in result.lowered.receipt.trace or []]


def _function(main: str, name: str) -> str:
    """The body of C function ``name`` (its definition: the line naming it, then the braces)."""
    found = re.search(rf"^[^\n;]*\b{name}\([^;{{\n]*\)\n\{{\n", main, re.M)
    assert found is not None, name
    depth, at = 1, found.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(main[at], 0)
        at += 1
    return main[found.end() : at - 1]


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_counter_example_reports_every_operation_then_runs_the_behaviour(target: str) -> None:
    result = _lowered(EXAMPLES / "behaviour_counter.yaml", target=target, framework="hal")
    main = _clean(result)["Core/Src/main.c"]
    # rac_ok leaves "rac: done" to the behaviour; main waits for the reports, then hands over.
    assert "rac: done" not in _function(main, "rac_ok") and 'rac_b_put_str("rac: done");' in main
    body = _function(main, "main")
    assert body.index("while (rac_reported < 1U") < body.index("rac_behaviour_run();")
    assert "HAL_GPIO_TogglePin(GPIOD, GPIO_PIN_12);" in main if target == "stm32f407" else "HAL_GPIO_TogglePin(" in main
    assert _lines(result) == ["^rac: boot\\b.*$", "^rac: led ok\\b.*$", *(f"^item {i}$" for i in range(5)),
                              "^done sum=10$", "^rac: done$"]  # fmt: skip


@pytest.mark.parametrize("target", HAL_TARGETS)
@pytest.mark.parametrize("rtos", [False, True], ids=["super-loop", "freertos"])
def test_events_outputs_and_actions_lower_clean_in_both_variants(target: str, rtos: bool) -> None:
    result = _lowered(_plan(RICH, target, rtos))
    files = _clean(result)
    main = files["Core/Src/main.c"]
    # The behaviour runs where the operations' loop runs: main() in the super-loop, the rac_loop thread under FreeRTOS.
    host = _function(main, "rac_loop") if rtos else _function(main, "main")
    assert "rac_behaviour_run();" in host and ("osKernelStart" in main) is rtos
    assert ("osDelay(1U)" in _function(main, "rac_b_idle")) is rtos
    # Waits keep the operations' loop (the watchdog feed among it) going.
    assert "rac_ops_poll();" in _function(main, "rac_b_idle") and "HAL_IWDG_Refresh(&hiwdg)" in _function(
        main, "rac_ops_poll")
    assert "rac_b_sleep(20U);" in main and "HAL_Delay" not in main
    # Outputs and actions through the operations' own names; hooks where the events happen.
    assert "(void)vin_read();\n" in main and "rac_v2_mv = (int32_t)(vin_mv);" in main
    assert "rac_v3_fed = HAL_IWDG_Refresh(&hiwdg) == HAL_OK;" in main and "(value_sw != 0)" in main
    assert "rac_b_on_button__edge();" in _function(main, "HAL_GPIO_EXTI_Callback")
    expiry = "tick_expired" if rtos else "HAL_TIM_PeriodElapsedCallback"
    assert "rac_b_on_tick__expiry();" in _function(main, expiry)


@pytest.mark.parametrize("rtos", [False, True], ids=["super-loop", "freertos"])
def test_state_shared_with_an_interrupt_is_locked_by_primask_in_both_variants(rtos: bool) -> None:
    plan = _plan(SW_IRQ, "stm32f407", rtos)
    plan["behaviour"]["vars"][0]["guard"] = "lock"
    result = _lowered(plan)
    main = _clean(result)["Core/Src/main.c"]
    # PRIMASK saved and restored: it nests, works in a handler, and excludes interrupts above the kernel's
    # syscall priority too (taskENTER_CRITICAL would not).
    locked = "const uint32_t rac_b_key = __get_PRIMASK();\n        __disable_irq();"
    assert locked in _function(main, "rac_t0_t0") and "__set_PRIMASK(rac_b_key);" in main
    assert "taskENTER_CRITICAL" not in main
    shared = "variable hits is shared by an interrupt and the thread: a critical section"
    assert any(shared in n for n in _notes(result))


def test_a_blocking_step_defers_the_event_and_the_receipt_says_where_each_trigger_runs() -> None:
    result = _lowered(_plan(RICH, "stm32f407"))
    main = _clean(result)["Core/Src/main.c"]
    notes = _notes(result)
    assert any("t1: edge is raised in an interrupt; its steps run in the behaviour's thread" in n and "print" in n
               for n in notes)  # fmt: skip
    assert any("t2: runs in the interrupt handler of expiry" in n for n in notes)
    edge = _function(main, "rac_b_on_button__edge")
    assert "rac_t1_t1_since[tail] = rac_b_now;" in edge and "rac_t1_t1();" not in edge
    assert "rac_t2_t2();" in _function(main, "rac_b_on_tick__expiry")


def test_an_os_timer_trigger_runs_in_the_timer_service_thread_and_the_receipt_says_so() -> None:
    result = _lowered(_plan(RICH, "stm32h743", rtos=True))
    assert any("t2: expiry comes from an osTimer callback under FreeRTOS" in n for n in _notes(result))
    assert not any("osTimer" in n for n in _notes(_lowered(_plan(RICH, "stm32h743"))))


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_sw_irq_pends_the_facts_line_through_a_ram_vector_table(target: str) -> None:
    result = _lowered(_plan(SW_IRQ, target))
    files = _clean(result)
    main = files["Core/Src/main.c"]
    soft = software_irq(load_target(target))
    assert soft is not None
    line, handler = soft.line, soft.handler
    # ST's start-up file reserves the line: main() copies the table to RAM and installs the it.c handler there.
    assert f"NVIC_SetVector((IRQn_Type){line}, (uint32_t)(uintptr_t)&{handler});" in main
    relocated = main.index("SCB->VTOR = (uint32_t)(uintptr_t)rac_vectors;")
    assert relocated < main.index(f"HAL_NVIC_EnableIRQ((IRQn_Type){line});")
    assert f"HAL_NVIC_SetPendingIRQ((IRQn_Type){line});" in main
    it = next(text for path, text in files.items() if path.endswith("_it.c"))
    assert f"void {handler}(void)\n{{\n    soft_irq();\n}}" in it
    # No step of the irq trigger blocks: the hook runs it in the interrupt, its variable is guarded by atomics.
    hook = _function(main, "rac_b_on_soft__irq")
    assert "rac_t1_t1();" in hook and "_since[" not in hook and "rac_b_on_soft__irq();" in _function(main, "soft_irq")
    assert any("t1: runs in the interrupt handler of irq" in n for n in _notes(result))
    assert any("variable hits is shared" in n for n in _notes(result))
    assert ("SCB_CleanDCache_by_Addr(rac_vectors" in main) is (target == "stm32h743")
    assert _lines(result) == ["^rac: boot\\b.*$", "^rac: led ok\\b.*$", "^rac: soft ok\\b.*$", "^hits=5$",
                              "^rac: done$"]  # fmt: skip


def test_the_verifier_judges_the_software_interrupt_path_as_an_interrupt() -> None:
    files = dict(_lowered(_plan(SW_IRQ, "stm32f407")).lowered.files)  # type: ignore[union-attr]
    seeded = "    soft_events++;\n"
    files["Core/Src/main.c"] = files["Core/Src/main.c"].replace(seeded, seeded + "    HAL_Delay(1U);\n", 1)
    found = verify_sources(files, "hal", load_target("stm32f407")).evidence
    assert [e.code for e in found] == ["E_ISR_BLOCKING"] and "soft_irq" in (found[0].location or "")


def test_a_second_software_interrupt_is_refused() -> None:
    plan = _plan(SW_IRQ, "stm32f407")
    plan["operations"].append({"op": "sw_irq", "name": "other"})
    result = run_plan(plan)
    assert result.status is not Status.PASS
    assert any("one software-pended line" in e.message for e in result.evidence)


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_persisted_variables_live_in_retained_ram_and_the_readme_asks_for_the_section(target: str) -> None:
    result = _lowered(EXAMPLES / "behaviour_boot_counter.yaml", target=target, framework="hal")
    files = _clean(result)
    main = files["Core/Src/main.c"]
    assert "} rac_v0_boots_kept __attribute__((section(\".noinit\"), aligned(32)));" in main
    assert "rac_v0_boots_kept.check = (rac_b_crc32((const uint8_t *)&rac_v0_boots_kept.value" in main
    assert "rac_b_retain(&rac_v0_boots_kept, sizeof(rac_v0_boots_kept));" in main
    # Where the D-cache is on (the H743 under this framework), a save is cleaned to RAM at once.
    assert ("SCB_CleanDCache_by_Addr(kept, (int32_t)size);" in main) is (target == "stm32h743")
    assert "HAL_NVIC_SystemReset();" in main
    assert ".noinit (NOLOAD)" in files["README.md"]
    assert any("boots kept in retained RAM (section .noinit)" in n for n in _notes(result))
    # The predicted console follows the chip across its two resets.
    lines = _lines(result)
    assert lines.count("^rac: boot\\b.*$") == 3 and lines[-3:] == ["^boot number 3$", "^third boot reached$",
                                                                   "^rac: done$"]  # fmt: skip


def test_persisted_values_larger_than_the_retained_block_are_refused_with_working_relaxations() -> None:
    plan = _plan(SW_IRQ, "stm32f407")
    plan["behaviour"]["vars"].append({"name": "blob", "type": "bytes", "size": 255, "persist": True})
    plan["behaviour"]["triggers"][0]["do"].append({"set": {"blob": {"fill": 7, "size": 255}}})
    result = run_plan(plan)
    refusal = next(e for e in result.evidence if e.code == "E_BEHAVIOUR_PERSIST")
    assert "retained RAM block (.noinit)" in refusal.message and "HAL" in refusal.message
    for fix in refusal.relaxations:
        assert run_plan(fix.apply(plan)).status is Status.PASS, fix.description


#: A JEDEC id read over SPI and a configuration written then read back over I2C, from a variable's bytes.
BUS: dict[str, Any] = {
    "framework": "hal",
    "operations": [
        {"op": "spi_transfer", "name": "flash_id", "device": "flash", "register_index": 0x9F, "read_bytes": 3},
        {"op": "i2c_transfer", "name": "sensor", "device": "tmp102", "register_index": 1, "write_bytes": 2,
         "read_bytes": 2, "retries": 2},
    ],
    "behaviour": {
        "vars": [{"name": "jedec", "type": "bytes", "size": 3}, {"name": "config", "type": "bytes", "size": 2,
                                                                 "init": {"hex": "60 a0"}},
                 {"name": "readback", "type": "bytes", "size": 2}, {"name": "wrote", "type": "bool", "init": False}],
        "triggers": [{"at": "boot", "do": [
            {"act": {"op": "flash_id", "action": "transfer", "into": "jedec"}},
            {"act": {"op": "sensor", "action": "transfer", "args": {"tx": {"var": "config"}}, "into": "readback",
                     "ok": "wrote"}},
            {"if": {"cond": "wrote and readback == config", "then": [{"print": "config kept"}],
                    "else": [{"print": "config lost"}]}},
            {"print": "jedec {jedec}"}]}],
    },
}  # fmt: skip


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_bus_transfers_send_a_variables_bytes_and_read_into_variables(target: str) -> None:
    plan = _plan(BUS, target)
    spi, cs = ("SPI1", "PD14") if target == "stm32h743" else ("SPI2", "PB12")
    plan["resources"] = {"devices": [
        {"name": "flash", "bus": "spi", "controller": spi, "chip_select": cs, "frequency_hz": 1000000},
        {"name": "tmp102", "bus": "i2c", "controller": "I2C1", "address": 0x48, "frequency_hz": 100000}]}  # fmt: skip
    result = _lowered(plan)
    main = _clean(result)["Core/Src/main.c"]
    assert "(void)flash_id_transfer(NULL, 0U);" in main
    assert "rac_v3_wrote = sensor_transfer(rac_v1_config, rac_v1_config_len);" in main
    assert "rac_b_copy(rac_v0_jedec, &rac_v0_jedec_len, 3U, flash_id_in, flash_id_in_len);" in main
    helper = _function(main, "sensor_transfer")
    assert "attempt <= 2U" in helper and "MX_I2C1_Recover();" in helper
    assert "HAL_I2C_Mem_Write(&hi2c1, 0x48U << 1, 0x01U, I2C_MEMADD_SIZE_8BIT, out, 2U" in helper
    assert "HAL_I2C_Mem_Read(&hi2c1, 0x48U << 1, 0x01U, I2C_MEMADD_SIZE_8BIT, sensor_in, 2U" in helper
    spi_helper = _function(main, "flash_id_transfer")
    assert "uint8_t out[4] = {0x9FU};" in spi_helper and "flash_id_in[i] = back[1U + i];" in spi_helper
    choice, *rest = _lines(result)[3:]
    assert [[o["line"] for o in option] for option in choice["choice"]] == [["^config kept$"], ["^config lost$"]]
    assert rest == ["^jedec (?:[0-9a-f]{2})*$", "^rac: done$"]


def test_the_run_judge_holds_a_hal_console_to_the_prediction() -> None:
    quiet = _plan(SW_IRQ, "stm32f407")
    loud = _plan(SW_IRQ, "stm32f407")
    loud["operations"].append({"op": "uart_print", "name": "hello", "message": "hello", "repeat_interval_ms": 300})
    _lowered(quiet), _lowered(loud)
    console = ["rac: boot stm32f407", "rac: led ok", "rac: soft ok", "hits=5", "rac: done"]
    noisy = [*console[:3], "hello", "rac: hello ok", "hello", *console[3:]]
    target = load_target("stm32f407")
    for plan, transcript, passed in ((quiet, console, True), (quiet, noisy, False), (loud, noisy, True)):
        verdicts, _ = judge(parse_plan(plan), target, "hal", "\r\n".join(transcript))
        assert verdicts and verdicts[0].passed is passed, (transcript, verdicts)
    wrong = [*console[:3], "hits=4", "rac: done"]
    verdicts, evidence = judge(parse_plan(quiet), target, "hal", "\r\n".join(wrong))
    assert not verdicts[0].passed and evidence
    # Operations report in plan order before the behaviour: a swapped pair is a failed run.
    swapped = [console[0], console[2], console[1], *console[3:]]
    assert not judge(parse_plan(quiet), target, "hal", "\n".join(swapped))[0][0].passed


def test_start_time_prints_come_before_the_reports_in_the_prediction() -> None:
    plan = _plan(RICH, "stm32f407")
    plan["operations"].insert(0, {"op": "uart_print", "name": "hello", "message": "hello"})
    lines = _lines(_lowered(plan))
    assert lines[:4] == ["^rac: boot\\b.*$", "^hello$", "^rac: wdt (expired|no expiry) before this boot$",
                         "^rac: hello ok\\b.*$"]  # fmt: skip


@pytest.mark.parametrize("example", ["gpio_blink.yaml", "hal_rtos_kernel.yaml", "events_button_led.yaml"])
def test_plans_without_a_behaviour_keep_hal_main_as_it_was(example: str) -> None:
    result = _lowered(EXAMPLES / example, target="stm32f407", framework="hal")
    files = result.lowered.files  # type: ignore[union-attr]
    main = files["Core/Src/main.c"]
    assert "rac_behaviour_run" not in main and "rac_ops_poll" not in main and "rac_b_" not in main
    assert 'rac_report("rac: done\\r\\n");' in _function(main, "rac_ok") and "    for (;;) {\n" in main
    assert "## The behaviour" not in files["README.md"] and "rac_vectors" not in main


def test_the_console_transmit_bound_covers_the_behaviours_longest_line() -> None:
    plan = _plan(SW_IRQ, "stm32f407")
    plan["behaviour"]["vars"].append({"name": "blob", "type": "bytes", "size": 90, "init": {"fill": 1, "size": 90}})
    plan["behaviour"]["triggers"][0]["do"].append({"print": "blob={blob}"})
    main = _clean(_lowered(plan))["Core/Src/main.c"]
    line = int(re.search(r"static char rac_b_line\[(\d+)\];", main).group(1))  # type: ignore[union-attr]
    bound = int(re.search(r"#define UART_TX_TIMEOUT_MS (\d+)U", main).group(1))  # type: ignore[union-attr]
    baud = load_target("stm32f407").board.console.baud  # type: ignore[union-attr]
    assert line > 180 and bound >= 2 * 10 * line * 1000 / baud
