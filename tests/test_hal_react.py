"""Reactions (``react``, ``react_led``) on STM32Cube HAL: the realizer picks the context.

The generated ``main.c`` is parsed into its top-level functions: a non-blocking reaction (toggle or set the LED
the board facts name, count, give a semaphore) runs in the publisher's HAL callback; a blocking one (a log) is
deferred: the callback only bumps a volatile pending count, and the loop (``main``'s super-loop, or the
``rac_loop`` thread under FreeRTOS) prints. Every cell is also judged by the independent verifier (PASS), whose
ISR rules refuse a print or HAL_UART_Transmit reached from a callback. A source with no HAL realization, an
explicit ``context: isr`` for a log, and a FreeRTOS call from an interrupt above the syscall priority are refused
with located evidence.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources

PLANS = Path(__file__).parent / "plans"
SUPER_LOOP = PLANS / "stm32f407_hal_react.yaml"
RTOS = PLANS / "stm32h743_hal_react.yaml"
#: A top-level C function definition: its name, then its body up to the closing brace in column 0.
_FUNCTION = re.compile(r"^[A-Za-z_][\w \*]*?\b(\w+)\(([^;{]*?)\)\n\{\n(.*?)^\}", re.M | re.S)
_PRINTS = ("printf", "snprintf", "HAL_UART_Transmit(", "rac_report", "rac_ok(")


def _main(plan: Any, target: str) -> tuple[str, dict[str, str]]:
    result = run_plan(plan, target=target, framework="hal")
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]
    assert result.lowered is not None
    main = result.lowered.files["Core/Src/main.c"]
    return main, {m.group(1): m.group(3) for m in _FUNCTION.finditer(main)}


def _led(target: str, label: str) -> tuple[str, str]:
    """(GPIOx, GPIO_PIN_n) of the board LED with devicetree label ``label``, from the board facts."""
    led = next(led for led in load_target(target).board.leds if led.dt_label == label)
    match = re.fullmatch(r"P([A-K])(\d+)", led.pin)
    assert match is not None
    return f"GPIO{match.group(1)}", f"GPIO_PIN_{match.group(2)}"


def _branch(body: str, condition: str) -> str:
    """The block of the ``if`` whose condition starts with ``condition`` (up to its closing brace)."""
    start = body.index(f"if ({condition}")
    depth, i = 0, body.index("{", start)
    for j in range(i, len(body)):
        depth += {"{": 1, "}": -1}.get(body[j], 0)
        if depth == 0:
            return body[i : j + 1]
    raise AssertionError(f"unbalanced block after {condition!r}")


@pytest.mark.parametrize("target", ["stm32f407", "stm32h743"])
def test_super_loop_reactions_run_in_callbacks_and_the_log_in_the_loop(target: str) -> None:
    main, functions = _main(SUPER_LOOP, target)
    facts = load_target(target)
    button = next(b for b in facts.board.buttons if b.dt_label == "sw0")
    mask = f"GPIO_PIN_{int(button.pin[2:])}"

    # The EXTI callback runs the edge's reactions inside the button's (debounced) branch only.
    edge = _branch(functions["HAL_GPIO_EXTI_Callback"], f"GPIO_Pin == {mask}")
    assert "press_toggles_react();" in edge and "press_log_react();" in edge
    assert edge.index("button_events++;") < edge.index("press_toggles_react();")

    # The toggle is the board LED the facts name, in interrupt context; it counts the times it ran (volatile).
    gpio, pin = _led(target, "led0")
    assert functions["press_toggles_react"].split() == [f"HAL_GPIO_TogglePin({gpio},", f"{pin});",
                                                        "value_press_toggles++;"]  # fmt: skip
    assert "static volatile int32_t value_press_toggles;" in main
    gpio1, pin1 = _led(target, "led1")
    assert f"HAL_GPIO_WritePin({gpio1}, {pin1}, GPIO_PIN_SET);" in functions["once_lights_react"]
    # The LEDs are outputs MX_GPIO_Init drives dark before it enables any EXTI line.
    init = functions["MX_GPIO_Init"]
    assert init.index(f"HAL_GPIO_WritePin({gpio}, {pin}, GPIO_PIN_RESET);") < init.index("HAL_NVIC_EnableIRQ(")

    # The log is deferred: its callback only counts a volatile pending event, the loop prints it.
    assert functions["press_log_react"].strip() == "press_log_pending++;"
    assert "static volatile uint32_t press_log_pending;" in main
    loop = functions["main"].split("    for (;;) {", 1)[1]
    consumed = _branch(loop, "press_log_handled != press_log_pending")
    assert "press_log_handled++;" in consumed and "value_press_log++;" in consumed
    console = facts.board.console
    assert console is not None
    assert '"press" " (%ld)\\r\\n"' in consumed and f"HAL_UART_Transmit(&h{console.uart.lower()}," in consumed

    # Counting reactions: in the timer, UART and I2C callbacks; the DMA chain's done is raised by the loop.
    timers = functions["HAL_TIM_PeriodElapsedCallback"]
    assert re.search(
        r"if \(htim == &htim\d+\) \{\n\s+tick_events\+\+;\n\s+rac_tick_ok = true;\n\s+ticks_react\(\);", timers
    )
    assert functions["ticks_react"].strip() == "value_ticks++;"
    assert "sent_react();" in _branch(functions["HAL_UART_TxCpltCallback"], "huart == &")
    assert "writes_react();" in _branch(functions["HAL_I2C_ListenCpltCallback"], "regfile_wrote")
    assert "copies_react();" in _branch(loop, "rac_gather_ok")
    assert "copies_react" not in functions["gather_complete"]

    # Nothing reached from an interrupt prints.
    for name in ("HAL_GPIO_EXTI_Callback", "HAL_TIM_PeriodElapsedCallback", "HAL_UART_TxCpltCallback",
                 "HAL_I2C_ListenCpltCallback", "press_toggles_react", "press_log_react", "ticks_react", "sent_react",
                 "writes_react", "once_lights_react"):  # fmt: skip
        assert not any(p in functions[name] for p in _PRINTS), name


def test_rtos_reactions_give_from_the_isr_and_log_from_rac_loop() -> None:
    main, functions = _main(RTOS, "stm32h743")
    edge = functions["HAL_GPIO_EXTI_Callback"]
    assert "press_gives_react();" in edge and "press_lights_react();" in edge
    # osSemaphoreRelease is ISR-callable (CMSIS-FreeRTOS: xSemaphoreGiveFromISR); its result is checked.
    gives = functions["press_gives_react"]
    assert "if (osSemaphoreRelease(presses_sem) == osOK) {" in gives and "press_gives_lost++;" in gives
    assert "static volatile uint32_t press_gives_lost;" in main
    gpio, pin = _led("stm32h743", "led1")
    assert f"HAL_GPIO_TogglePin({gpio}, {pin});" in functions["tick_toggles_react"]
    assert "tick_toggles_react();" in _branch(functions["HAL_TIM_PeriodElapsedCallback"], "htim == &htim3")
    # The log is consumed by the rac_loop thread, not main (which only starts the kernel).
    assert functions["tick_log_react"].strip() == "tick_log_pending++;"
    assert "tick_log_handled != tick_log_pending" in functions["rac_loop"]
    assert "tick_log_pending" not in functions["main"]
    # A CMSIS-RTOS2 software timer's callback (timer service thread) runs its counting reaction.
    assert "soft_ticks_react();" in functions["soft_expired"]
    assert not any(p in functions[n] for n in ("press_gives_react", "tick_toggles_react") for p in _PRINTS)


def test_examples_with_reactions_lower_on_hal() -> None:
    main, functions = _main(PLANS.parent.parent / "examples" / "events_button_led.yaml", "stm32f407")
    assert "press_toggles_react();" in functions["HAL_GPIO_EXTI_Callback"]
    assert functions["tick_log_react"].strip() == "tick_log_pending++;"
    main, functions = _main(PLANS.parent.parent / "examples" / "uart_tx_async.yaml", "stm32h743")
    assert "sent_react();" in functions["HAL_UART_TxCpltCallback"]


def _data(path: Path) -> dict[str, Any]:
    return load_plan(path).model_dump(mode="json", exclude_none=True)


def test_a_source_without_a_hal_realization_is_refused_with_evidence() -> None:
    data = {"target": "stm32f407", "framework": "hal", "operations": [
        {"op": "work_item", "name": "job", "submit": "periodic", "period_ms": 100},
        {"op": "react", "name": "job_done", "source": "job", "event": "done", "action": "count"}]}  # fmt: skip
    result = run_plan(data)
    assert result.status is Status.INVALID
    found = [e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED"]
    assert found and found[0].location is not None and found[0].location.endswith("operations[0]")
    assert "work_item" in found[0].message


def test_a_log_asked_into_the_isr_is_refused_and_deferral_relaxes_it() -> None:
    data = _data(SUPER_LOOP)
    data["operations"][2]["context"] = "isr"
    result = run_plan(data)
    assert result.status is Status.INVALID
    blocking = next(e for e in result.evidence if e.code == "E_ISR_BLOCKING")
    assert blocking.location is not None and blocking.location.endswith("operations[2].context")
    assert {"press_log", "button"} <= set(blocking.objects)
    for relaxation in blocking.relaxations:
        patched = run_plan(apply_patch(data, relaxation.patch))
        assert patched.status is Status.PASS, relaxation.description
        assert patched.lowered is not None
        assert "press_log_pending++;" in patched.lowered.files["Core/Src/main.c"]


def test_a_give_from_an_interrupt_above_the_syscall_priority_is_refused() -> None:
    data = _data(RTOS)
    data["operations"][0]["irq_priority"] = 2
    result = run_plan(data)
    assert result.status is Status.INVALID
    refused = next(e for e in result.evidence if e.code == "E_TARGET_UNSUPPORTED")
    assert refused.location is not None and refused.location.endswith("operations[2].context")
    assert "NVIC priority 2" in refused.message and "syscall priority 5" in refused.message
    data["operations"][0]["irq_priority"] = 5
    assert run_plan(data).status is Status.PASS
    data["operations"][0]["irq_priority"] = 2
    data["operations"][2]["context"] = "deferred"
    deferred = run_plan(data)
    assert deferred.status is Status.PASS and deferred.lowered is not None
    assert "press_gives_pending++;" in deferred.lowered.files["Core/Src/main.c"]


def test_the_verifier_refuses_a_console_transmit_moved_into_a_reaction_callback() -> None:
    """The deferral matters: the same transmit the loop makes, placed in the EXTI-called reaction, is E_ISR_BLOCKING."""
    result = run_plan(SUPER_LOOP)
    assert result.status is Status.PASS and result.lowered is not None
    files = dict(result.lowered.files)
    main = files["Core/Src/main.c"]
    start = main.index("static void press_log_react(void)\n{")
    end = main.index("}\n", start) + 2
    inlined = (
        "static void press_log_react(void)\n{\n"
        '    if (HAL_UART_Transmit(&husart2, (const uint8_t *)"press\\r\\n", 7U, UART_TX_TIMEOUT_MS) != HAL_OK) {\n'
        "        uart_tx_errors++;\n    }\n}\n"
    )
    bad = {**files, "Core/Src/main.c": main[:start] + inlined + main[end:]}
    found = verify_sources(bad, "hal", load_target("stm32f407")).evidence
    blocking = [e for e in found if e.code == "E_ISR_BLOCKING"]
    assert blocking and "press_log_react" in blocking[0].message and "HAL_GPIO_EXTI_Callback" in blocking[0].message
