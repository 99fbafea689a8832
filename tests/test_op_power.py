"""The sleep operation against the chip power facts: seeded violations, their evidence and relaxations.

Each seeded plan is judged by the real pipeline (obligations, lowering, independent verifier); every
relaxation offered is applied and the patched plan must then pass outright.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.power import power
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan


def _plan(target: str, framework: str, **sleep: Any) -> dict[str, Any]:
    return {"target": target, "framework": framework, "operations": [{"op": "sleep", "name": "nap", **sleep}]}


#: (id, plan, code, objects the evidence must name, magnitude name → (value, unit)).
SEEDED = [
    ("rtc-cannot-wake-nrf-system-off",
     _plan("nrf52840", "zephyr", state="system_off", wake=["rtc"], after_ms=5000, resume="restart"),
     "E_POWER_WAKE_SOURCE", {"system_off", "rtc"}, {"wake_after": (5000, "ms")}),
    ("timer-cannot-wake-f407-stop",
     _plan("stm32f407", "zephyr", state="stop", wake=["timer"], after_ms=250),
     "E_POWER_WAKE_SOURCE", {"stop", "timer"}, {"wake_after": (250, "ms")}),
    ("control-h743-stop-wake-pin",
     _plan("stm32h743", "zephyr", state="stop", wake=["gpio"], button="sw0"), None, set(), {}),
    ("deep-sleep-loses-ram-esp32s3",
     _plan("esp32s3", "espidf", state="deep_sleep", wake=["rtc"], after_ms=1000),
     "E_POWER_RAM_LOST", {"deep_sleep", "nap"}, {"ram_lost": (540672, "bytes")}),
    ("non-rtc-pin-cannot-wake-esp32s3-deep-sleep",
     {**_plan("esp32s3", "espidf", state="deep_sleep", wake=["gpio"], button="door", resume="restart"),
      "resources": {"pins": [{"name": "door", "pin": "GPIO40"}]}},
     "E_POWER_WAKE_SOURCE", {"deep_sleep", "gpio", "door", "GPIO40"}, {}),
    ("pm-lock-on-a-state-nothing-enters-by-itself",
     {"target": "esp32s3", "framework": "espidf",
      "operations": [{"op": "pm_lock", "name": "nap", "state": "deep_sleep"}]},
     "E_POWER_STATE", {"deep_sleep", "esp32s3"}, {"hold": (100, "ms")}),
    ("runtime-pm-on-the-console-uart",
     {"target": "nrf52840", "framework": "zephyr",
      "operations": [{"op": "device_pm", "name": "nap", "device": "uart0"}]},
     "E_POWER_DEVICE_SUSPENDED", {"uart0"}, {"uses": (1, "get/put pairs")}),
    ("runtime-pm-on-a-bus-a-device-uses",
     {"target": "stm32f407", "framework": "zephyr",
      "resources": {"devices": [{"name": "imu", "bus": "i2c", "controller": "I2C1", "address": 0x68}]},
      "operations": [{"op": "device_pm", "name": "nap", "device": "i2c1", "uses": 2}]},
     "E_POWER_DEVICE_SUSPENDED", {"i2c1", "resources.devices.imu"}, {"uses": (2, "get/put pairs")}),
    ("baremetal-sleep-wakes-on-systick-only",
     _plan("stm32f407", "baremetal", state="sleep", wake=["rtc"], after_ms=20),
     "E_TARGET_UNSUPPORTED", {"sleep", "rtc"}, {}),
    ("hal-sleep-wakes-on-systick-only",
     _plan("stm32h743", "hal", state="csleep", wake=["gpio"], button="sw0"),
     "E_TARGET_UNSUPPORTED", {"csleep", "gpio"}, {}),
    ("system-off-before-another-operation",
     {"target": "nrf52840", "framework": "zephyr",
      "operations": [{"op": "sleep", "name": "nap", "state": "system_off", "wake": ["gpio"], "button": "sw0",
                      "resume": "restart"}, {"op": "gpio_set", "name": "lamp", "led": "led0"}]},
     "E_POWER_RESET_LAST", {"system_off", "nap", "gpio_set"}, {"operations_after": (1, "operations")}),
    ("deep-sleep-with-a-periodic-print",
     {"target": "esp32s3", "framework": "espidf",
      "operations": [{"op": "uart_print", "name": "hello", "message": "hi", "repeat_interval_ms": 1000},
                     {"op": "sleep", "name": "nap", "state": "deep_sleep", "wake": ["rtc"], "after_ms": 1000,
                      "resume": "restart"}]},
     "E_POWER_RESET_LAST", {"deep_sleep", "nap", "uart_print"}, {"operations_after": (1, "operations")}),
    ("hal-sleep-mode-wakes-on-the-systick-not-the-rtc",
     _plan("stm32f407", "hal", state="sleep", wake=["rtc"], after_ms=1000),
     "E_TARGET_UNSUPPORTED", {"sleep", "rtc"}, {}),
    ("hal-standby-pin-is-not-a-wkup-pin",
     {**_plan("stm32h743", "hal", state="standby", wake=["gpio"], button="door", resume="restart"),
      "resources": {"pins": [{"name": "door", "pin": "PB5"}]}},
     "E_POWER_WAKE_SOURCE", {"standby", "gpio", "door", "PB5"}, {}),
    ("unknown-state",
     _plan("stm32f407", "zephyr", state="hibernate", wake=["rtc"], after_ms=1000),
     "E_POWER_STATE", {"hibernate", "stm32f407"}, {}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "plan", "code", "objects", "magnitudes"), SEEDED, ids=[c[0] for c in SEEDED])
def test_seeded_power_violation_names_objects_and_every_relaxation_validates(
    case: str, plan: dict[str, Any], code: str | None, objects: set[str], magnitudes: dict[str, tuple[int, str]]
) -> None:
    result = run_plan(parse_plan(plan))
    if code is None:  # the control: a wake pin that ends Stop on the H743
        assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
        return
    assert result.status is Status.INVALID
    found = [e for e in result.evidence if e.code == code]
    assert found, [(e.code, e.message) for e in result.evidence]
    evidence = found[0]
    assert objects <= set(evidence.objects), evidence.objects
    measured = {m.name: (m.value, m.unit) for m in evidence.magnitudes}
    for name, expected in magnitudes.items():
        assert measured[name] == expected
    assert evidence.relaxations, f"{case}: no relaxation offered"
    for relaxation in evidence.relaxations:
        patched = apply_patch(plan, relaxation.patch)
        again = run_plan(parse_plan(patched))
        assert again.status is Status.PASS, (relaxation.description, [(e.code, e.message) for e in again.evidence])


def test_wake_evidence_names_the_state_and_the_sources_that_can_wake_it() -> None:
    result = run_plan(parse_plan(_plan("nrf52840", "zephyr", state="system_off", wake=["rtc"], after_ms=5000,
                                       resume="restart")))  # fmt: skip
    message = next(e.message for e in result.evidence if e.code == "E_POWER_WAKE_SOURCE")
    assert "system_off" in message and "wake sources there: gpio" in message and "system_on_idle" in message


def test_a_pin_that_is_not_a_wkup_pin_cannot_wake_standby_but_pa0_can() -> None:
    facts = power(load_target("stm32f407"))
    assert facts is not None
    standby = facts.state("standby")
    assert standby is not None and standby.wake_resets and not standby.ram_retained
    gpio = standby.wakes("gpio")
    assert gpio is not None and gpio.pins == ("PA0",)
    esp = power(load_target("esp32s3"))
    assert esp is not None
    deep = esp.state("deep_sleep")
    assert deep is not None and deep.wakes("gpio") is not None
    assert "GPIO21" in deep.wakes("gpio").pins and "GPIO22" not in deep.wakes("gpio").pins  # type: ignore[union-attr]


def _files(result: Any) -> dict[str, str]:
    assert result.lowered is not None
    return dict(result.lowered.files)


def test_rtc_wake_sleep_lowers_to_the_framework_mechanisms() -> None:
    zephyr = run_plan(parse_plan(_plan("stm32f407", "zephyr", state="stop", wake=["rtc"], after_ms=100)))
    assert zephyr.status is Status.PASS
    files = _files(zephyr)
    assert "CONFIG_PM=y" in files["prj.conf"] and "K_MSEC(100)" in files["src/main.c"]
    off = run_plan(parse_plan(_plan("nrf52840", "zephyr", state="system_off", wake=["gpio"], button="sw0",
                                    resume="restart")))  # fmt: skip
    assert off.status is Status.PASS
    main = _files(off)["src/main.c"]
    assert "sys_poweroff();" in main and "GPIO_INT_LEVEL_ACTIVE" in main
    light = run_plan(parse_plan(_plan("esp32s3", "espidf", state="light_sleep", wake=["rtc", "gpio"],
                                      after_ms=2000, button="sw0")))  # fmt: skip
    assert light.status is Status.PASS
    app = _files(light)["main/main.c"]
    assert "esp_sleep_enable_timer_wakeup(2000000ULL)" in app and "esp_light_sleep_start()" in app


def test_a_reset_on_wake_sleep_reports_done_before_sleeping_and_the_wake_cause_on_boot() -> None:
    """System OFF / deep sleep end the run with a reset: the sleeping operation reports (completing
    "rac: done") just before it enters the state, and the next boot prints why it started."""
    off = run_plan(
        parse_plan(
            {
                "target": "nrf52840",
                "framework": "zephyr",
                "operations": [
                    {"op": "gpio_set", "name": "lamp", "led": "led0"},
                    {
                        "op": "sleep",
                        "name": "nap",
                        "state": "system_off",
                        "wake": ["gpio"],
                        "button": "sw0",
                        "resume": "restart",
                    },
                ],
            }
        )
    )
    assert off.status is Status.PASS, [(e.code, e.message) for e in off.evidence]
    files = _files(off)
    main = files["src/main.c"]
    assert main.index('rac_ok("nap");') < main.index("sys_poweroff();")
    assert main.index("hwinfo_get_reset_cause(&cause)") < main.index("app_nap_step(void)")
    assert "RESET_LOW_POWER_WAKE" in main and "CONFIG_HWINFO=y" in files["prj.conf"]
    deep = run_plan(
        parse_plan(
            {
                "target": "esp32s3",
                "framework": "espidf",
                "operations": [
                    {"op": "uart_print", "name": "hello", "message": "hi"},
                    {
                        "op": "sleep",
                        "name": "nap",
                        "state": "deep_sleep",
                        "wake": ["rtc"],
                        "after_ms": 1000,
                        "resume": "restart",
                    },
                ],
            }
        )
    )
    assert deep.status is Status.PASS, [(e.code, e.message) for e in deep.evidence]
    app = _files(deep)["main/main.c"]
    assert (
        app.index("esp_sleep_get_wakeup_cause()") < app.index('rac_ok("nap");') < app.index("esp_deep_sleep_start();")
    )
    assert "atomic_load(&rac_reported) < 1U && waited < 10000U" in app


def test_hal_sleep_waits_in_sleep_mode_for_the_ticks() -> None:
    result = run_plan(parse_plan(_plan("stm32f407", "hal", state="sleep", wake=["timer"], after_ms=25)))
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    main = _files(result)["Core/Src/main.c"]
    assert "HAL_PWR_EnterSLEEPMode(PWR_MAINREGULATOR_ON, PWR_SLEEPENTRY_WFI);" in main
    assert "< 25U" in main


@pytest.mark.parametrize(("target", "irq", "wkup", "clear"), [
    ("stm32f407", "EXTI0", 1, "__HAL_PWR_CLEAR_FLAG(PWR_FLAG_WU);"),
    ("stm32h743", "EXTI15_10", 4, "__HAL_PWR_CLEAR_WAKEUPFLAG(PWR_WAKEUP_FLAG4);"),
])  # fmt: skip
def test_hal_stop_and_standby_wake_on_the_board_button(target: str, irq: str, wkup: int, clear: str) -> None:
    """Stop: the button's EXTI line (from its pin number), SysTick suspended, the clock tree configured
    again after the wake-up. Standby: the button's WKUP index in the facts' list, its flag cleared by the
    PWR registers the SVD facts have (per-pin WKUPCR on the H7, CSR.WUF on the F4)."""
    stop = run_plan(parse_plan(_plan(target, "hal", state="stop", wake=["gpio"], button="sw0")))
    assert stop.status is Status.PASS, [(e.code, e.message) for e in stop.evidence]
    main = _files(stop)["Core/Src/main.c"]
    entered = main.index("HAL_PWR_EnterSTOPMode(PWR_LOWPOWERREGULATOR_ON, PWR_STOPENTRY_WFI);")
    assert (
        main.index("HAL_SuspendTick();")
        < entered
        < main.rindex("SystemClock_Config();", 0, main.index("HAL_ResumeTick();"))
    )
    assert f"HAL_NVIC_EnableIRQ({irq}_IRQn);" in main and "GPIO_MODE_IT_RISING" in main
    standby = run_plan(parse_plan(_plan(target, "hal", state="standby", wake=["gpio"], button="sw0", resume="restart")))
    assert standby.status is Status.PASS, [(e.code, e.message) for e in standby.evidence]
    main = _files(standby)["Core/Src/main.c"]
    assert main.index(clear) < main.index(f"HAL_PWR_EnableWakeUpPin(PWR_WAKEUP_PIN{wkup});")
    assert main.index(f"HAL_PWR_EnableWakeUpPin(PWR_WAKEUP_PIN{wkup});") < main.index("HAL_PWR_EnterSTANDBYMode();")
    assert "__HAL_PWR_GET_FLAG(PWR_FLAG_SB)" in main


def test_pm_lock_and_runtime_pm_are_balanced_in_the_generated_c() -> None:
    plan = {"target": "stm32h743", "framework": "zephyr", "operations": [
        {"op": "pm_lock", "name": "quiet", "state": "stop", "hold_ms": 30},
        {"op": "device_pm", "name": "bus", "device": "i2c1", "uses": 4}]}  # fmt: skip
    result = run_plan(parse_plan(plan))
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    main = _files(result)["src/main.c"]
    assert main.count("pm_policy_state_lock_get(PM_STATE_SUSPEND_TO_IDLE") == 1
    assert main.count("pm_policy_state_lock_put(PM_STATE_SUSPEND_TO_IDLE") == 1
    assert main.count("pm_device_runtime_get(") == main.count("pm_device_runtime_put(") == 1
    conf = _files(result)["prj.conf"]
    assert "CONFIG_PM_DEVICE_RUNTIME=y" in conf and "CONFIG_PM=y" in conf


def test_every_power_state_cites_its_source_and_every_pack_has_states() -> None:
    from rac_fw.domains.firmware.facts.load import target_ids

    for target_id in target_ids():
        facts = power(load_target(target_id))
        assert facts is not None and facts.states and facts.source, target_id
        for state in facts.states:
            assert state.source and state.wake, (target_id, state.name)
            assert state.ram_retained != state.wake_resets, (target_id, state.name)


def test_baremetal_sleep_runs_in_qemu_woken_by_systick(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """STM32F407 (QEMU netduinoplus2): WFI in Sleep mode, SysTick ends each wait, the time slept is measured."""
    from conftest import require_tool

    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    monkeypatch.setenv("RAC_FW_CACHE", str(tmp_path / "cache"))
    plan = {"target": "stm32f407", "framework": "baremetal", "operations": [
        {"op": "uart_print", "name": "hello", "message": "before the nap"},
        {"op": "sleep", "name": "nap", "state": "sleep", "wake": ["timer"], "after_ms": 40}]}  # fmt: skip
    result = run_plan(parse_plan(plan), out_dir=tmp_path / "out", build="gcc", run="qemu", run_timeout_s=10.0)
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    logs = list((tmp_path / "out").rglob("console.log"))
    assert logs, "the QEMU run left no console log"
    text = "\n".join(p.read_text() for p in logs)
    match = re.search(r"^rac: nap ok state=sleep slept_ms=(\d+)", text, re.M)
    assert match and 40 <= int(match.group(1)) <= 41, text  # the first SysTick wake-up at or after 40 ms
