"""The RTC wake-up timer as a Stop and Standby wake source on the STM32 HAL (issue 14).

The facts (``power.rtc_wakeup`` of the chip packs, cited to RM0090 / RM0433) give the wake-up clock's
dividers, counter width and prescaler ranges; ``after_ms`` becomes a wake-up clock and a WUT value in
Python (``facts.power.wake_up_setting``), an unreachable delay is E_POWER_WAKE_TIME with the nearest
reachable delays as relaxations. Every plan here runs the real pipeline (obligations, lowering, the
independent static verifier with the HAL catalogs harvested from the real headers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target, peripheral
from rac_fw.domains.firmware.facts.power import (
    ck_spre_prescalers,
    nearest_reachable_ms,
    power,
    wake_up_range_ms,
    wake_up_setting,
)
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources

HAL_TARGETS = ("stm32f407", "stm32h743")
BAD = Path(__file__).parent / "bad_sources"
CATALOGS = Path(__file__).resolve().parents[1] / "rac_fw" / "domains" / "firmware" / "verify" / "sdk" / "hal"


def _plan(target: str, **sleep: Any) -> dict[str, Any]:
    return {"target": target, "framework": "hal", "operations": [{"op": "sleep", "name": "nap", **sleep}]}


def _run(plan: dict[str, Any]) -> Any:
    result = run_plan(parse_plan(plan))
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]
    assert result.lowered is not None
    return dict(result.lowered.files)


def _in_order(text: str, steps: list[str], start: int) -> None:
    """Each of ``steps`` occurs in ``text`` after ``start`` and after the step before it."""
    at = start
    for step in steps:
        found = text.find(step, at)
        assert found >= 0, f"{step!r} missing after offset {at}"
        at = found + len(step)


def _wakeup(target: str) -> Any:
    facts = power(load_target(target))
    assert facts is not None and facts.rtc_wakeup is not None
    return facts.rtc_wakeup


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_the_facts_list_the_rtc_as_a_wake_source_of_stop_and_standby(target: str) -> None:
    facts = power(load_target(target))
    assert facts is not None
    for name in ("stop", "standby"):
        state = facts.state(name)
        assert state is not None and state.wakes("rtc") is not None and "hal" in state.enter
    wakeup = _wakeup(target)
    assert wakeup.source.startswith(("RM0090", "RM0433"))
    assert wakeup.counter_bits == 16 and sorted(wakeup.rtcclk_dividers) == [2, 4, 8, 16]
    # The vector the facts name is an RTC interrupt in the SVD facts.
    assert wakeup.irq in {i.name for i in peripheral(target, "RTC").interrupts}


@pytest.mark.parametrize(("after_ms", "selection", "counter"), [
    (1, "RTCCLK_DIV2", 15),              # 16 ticks of 62.5 us
    (4096, "RTCCLK_DIV2", 65535),        # the 16-bit counter's top at RTCCLK/2
    (4097, "RTCCLK_DIV4", 32775),
    (30000, "RTCCLK_DIV16", 59999),
    (32768, "RTCCLK_DIV16", 65535),
    (33000, "CK_SPRE_16BITS", 32),       # whole seconds of the 1 Hz ck_spre
    (86_400_000, "CK_SPRE_17BITS", 20863),  # 86400 s = 2^16 + 20863 + 1
])  # fmt: skip
def test_after_ms_becomes_a_wake_up_clock_and_counter(after_ms: int, selection: str, counter: int) -> None:
    wakeup = _wakeup("stm32f407")
    setting = wake_up_setting(wakeup, 32000, after_ms)
    assert setting is not None and (setting.selection, setting.counter) == (selection, counter)
    assert setting.ms == pytest.approx(after_ms)
    assert 0 <= setting.counter < 1 << wakeup.counter_bits


def test_every_setting_reaches_its_delay_exactly_and_the_gaps_offer_neighbours() -> None:
    wakeup = _wakeup("stm32h743")
    assert ck_spre_prescalers(wakeup, 32000) == (128, 250)
    assert wake_up_range_ms(wakeup, 32000) == (0.0625, 131_072_000.0)
    for after_ms in [*range(1, 32769, 97), 32768, *range(33000, 200000, 1000)]:
        setting = wake_up_setting(wakeup, 32000, after_ms)
        assert setting is not None, after_ms
        assert setting.ms == pytest.approx(after_ms) and 0 <= setting.counter <= 0xFFFF
    # Beyond RTCCLK/16's 32768 ms only whole seconds of ck_spre are reachable.
    assert all(wake_up_setting(wakeup, 32000, ms) is None for ms in range(32769, 40000, 97) if ms % 1000)
    assert wake_up_setting(wakeup, 32000, 40500) is None
    assert nearest_reachable_ms(wakeup, 32000, 40500) == [40000, 41000]


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_stop_arms_the_timer_after_rtc_init_and_deactivates_it_after_the_wake_up(target: str) -> None:
    result = run_plan(parse_plan(_plan(target, state="stop", wake=["rtc"], after_ms=2000)))
    assert result.status is Status.PASS and result.lowered is not None
    note = next(n for n in result.lowered.receipt.notes if "RTC wake-up timer" in n)
    assert "RTCCLK_DIV2 WUT 31999 = 2000 ms at LSI 32000 Hz" in note
    if target == "stm32f407":  # the LSI accuracy (DS8626 Table 38) in the receipt
        assert "17000-47000 Hz: the wake-up comes after 1362-3765 ms" in note
    files = dict(result.lowered.files)
    main = files["Core/Src/main.c"]
    order = ["osc.LSIState = RCC_LSI_ON;", "HAL_PWR_EnableBkUpAccess();", "RCC_RTCCLKSOURCE_LSI;",
             "__HAL_RCC_RTC_ENABLE();", "HAL_RTC_Init(&hrtc)", "HAL_NVIC_EnableIRQ(RTC_WKUP_IRQn);"]  # fmt: skip
    _in_order(main, order, main.index("static void nap_rtc_init(void)\n{"))
    start = main.index("int main(void)")
    steps = ["nap_rtc_init();", "HAL_RTCEx_SetWakeUpTimer_IT(&hrtc, 31999U, RTC_WAKEUPCLOCK_RTCCLK_DIV2)",
             "HAL_PWR_EnterSTOPMode(", "SystemClock_Config();", "HAL_RTCEx_DeactivateWakeUpTimer(&hrtc)",
             "rac_nap_ok = true;"]  # fmt: skip
    _in_order(main, steps, start)
    assert "hrtc.Init.AsynchPrediv = 127U;" in main and "hrtc.Init.SynchPrediv = 249U;" in main
    assert "void HAL_RTCEx_WakeUpTimerEventCallback(RTC_HandleTypeDef *handle)" in main
    assert "nap_woken = true;" in main.split("HAL_RTCEx_WakeUpTimerEventCallback", 1)[1]
    prefix = "stm32f4xx" if target == "stm32f407" else "stm32h7xx"
    it = files[f"Core/Src/{prefix}_it.c"]
    assert "void RTC_WKUP_IRQHandler(void)\n{\n    HAL_RTCEx_WakeUpTimerIRQHandler(&hrtc);\n}" in it
    assert "void RTC_WKUP_IRQHandler(void);" in files[f"Core/Inc/{prefix}_it.h"]
    assert "#define HAL_RTC_MODULE_ENABLED" in files[f"Core/Inc/{prefix}_hal_conf.h"]
    # H7 only (facts, not the chip name): the RTC APB gate the RCC has (RTCAPBEN) and the RTC_OUT remap field.
    h7 = target == "stm32h743"
    assert ("__HAL_RCC_RTC_CLK_ENABLE();" in main) is h7
    assert ("hrtc.Init.OutPutRemap = RTC_OUTPUT_REMAP_NONE;" in main) is h7


@pytest.mark.parametrize(("target", "pwr_flag"), [("stm32f407", True), ("stm32h743", False)])
def test_standby_clears_the_wake_up_flags_and_arms_the_timer_last(target: str, pwr_flag: bool) -> None:
    files = _run(_plan(target, state="standby", wake=["rtc"], after_ms=60000, resume="restart"))
    main = files["Core/Src/main.c"]
    start = main.index("int main(void)")
    steps = ["__HAL_PWR_GET_FLAG(PWR_FLAG_SB)", "nap_rtc_init();", "HAL_RTCEx_DeactivateWakeUpTimer(&hrtc)",
             "__HAL_RTC_WAKEUPTIMER_CLEAR_FLAG(&hrtc, RTC_FLAG_WUTF);", "__HAL_RTC_WAKEUPTIMER_EXTI_CLEAR_FLAG();",
             "rac_poll();", "HAL_RTCEx_SetWakeUpTimer_IT(&hrtc, 59U, RTC_WAKEUPCLOCK_CK_SPRE_16BITS)",
             "HAL_PWR_EnterSTANDBYMode();"]  # fmt: skip
    _in_order(main, steps, start)
    # The one PWR wake-up flag (CSR.WUF) where the PWR has no per-pin WKUPCR (SVD facts).
    assert ("__HAL_PWR_CLEAR_FLAG(PWR_FLAG_WU);" in main) is pwr_flag
    assert "HAL_RTCEx_WakeUpTimerEventCallback" not in main  # no ISR work: the wake-up is a reset


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_button_and_rtc_together_end_stop_and_standby(target: str) -> None:
    stop = _run(_plan(target, state="stop", wake=["gpio", "rtc"], button="sw0", after_ms=250))["Core/Src/main.c"]
    assert "HAL_GPIO_EXTI_Callback" in stop and "HAL_RTCEx_WakeUpTimerEventCallback" in stop
    assert stop.count("nap_woken = true;") == 2
    standby = _run(_plan(target, state="standby", wake=["rtc", "gpio"], button="sw0", after_ms=86_400_000,
                         resume="restart"))["Core/Src/main.c"]  # fmt: skip
    assert "HAL_PWR_EnableWakeUpPin(PWR_WAKEUP_PIN" in standby
    assert "RTC_WAKEUPCLOCK_CK_SPRE_17BITS" in standby


@pytest.mark.parametrize("target", HAL_TARGETS)
def test_an_unreachable_delay_is_refused_with_the_range_and_the_nearest_delays(target: str) -> None:
    plan = _plan(target, state="stop", wake=["rtc"], after_ms=40500)
    result = run_plan(parse_plan(plan))
    assert result.status is Status.INVALID
    evidence = next(e for e in result.evidence if e.code == "E_POWER_WAKE_TIME")
    assert {"stop", "rtc", "RTC_WKUP"} <= set(evidence.objects)
    measured = {m.name: (m.value, m.unit) for m in evidence.magnitudes}
    assert measured["wake_after"] == (40500, "ms") and measured["rtc_clock"] == (32000, "Hz")
    assert measured["shortest"] == (0.0625, "ms") and measured["longest"] == (131_072_000.0, "ms")
    if target == "stm32f407":  # the LSI spread the datasheet gives (DS8626 Table 38: 17-47 kHz)
        assert measured["earliest"][0] == pytest.approx(40500 * 32000 / 47000, abs=0.01)
        assert measured["latest"][0] == pytest.approx(40500 * 32000 / 17000, abs=0.01)
    values = []
    for relaxation in evidence.relaxations:
        patched = apply_patch(plan, relaxation.patch)
        again = run_plan(parse_plan(patched))
        assert again.status is Status.PASS, (relaxation.description, [(e.code, e.message) for e in again.evidence])
        values.append(patched["operations"][0]["after_ms"])
    assert values == [40000, 41000]


def test_rtc_wake_stays_refused_where_it_is_not_built() -> None:
    """Sleep mode on the HAL wakes on the SysTick only; bare metal builds no RTC wake-up; a timer cannot end Stop."""
    sleep = run_plan(parse_plan(_plan("stm32f407", state="sleep", wake=["rtc"], after_ms=100)))
    assert {e.code for e in sleep.evidence} == {"E_TARGET_UNSUPPORTED"}
    bare = run_plan(parse_plan({**_plan("stm32f407", state="sleep", wake=["rtc"], after_ms=100),
                                "framework": "baremetal"}))  # fmt: skip
    assert "E_TARGET_UNSUPPORTED" in {e.code for e in bare.evidence}
    timer = run_plan(parse_plan(_plan("stm32h743", state="stop", wake=["timer"], after_ms=100)))
    assert "E_POWER_WAKE_SOURCE" in {e.code for e in timer.evidence}


@pytest.mark.parametrize("catalog", ["api-stm32f4.json", "api-stm32h7.json"])
def test_the_catalogs_hold_the_rtc_wake_up_api_with_the_real_signatures(catalog: str) -> None:
    headers = json.loads((CATALOGS / catalog).read_text())["headers"]
    prefix = "stm32f4xx" if "f4" in catalog else "stm32h7xx"
    rtc, ex = headers[f"{prefix}_hal_rtc.h"]["functions"], headers[f"{prefix}_hal_rtc_ex.h"]["functions"]
    assert rtc["HAL_RTC_Init"] == "HAL_StatusTypeDef(RTC_HandleTypeDef *hrtc)"
    assert ex["HAL_RTCEx_SetWakeUpTimer_IT"] == (
        "HAL_StatusTypeDef(RTC_HandleTypeDef *hrtc, uint32_t WakeUpCounter, uint32_t WakeUpClock)"
    )
    assert ex["HAL_RTCEx_DeactivateWakeUpTimer"] == "HAL_StatusTypeDef(RTC_HandleTypeDef *hrtc)"
    assert (
        ex["HAL_RTCEx_WakeUpTimerIRQHandler"]
        == ex["HAL_RTCEx_WakeUpTimerEventCallback"]
        == ("void(RTC_HandleTypeDef *hrtc)")
    )


def test_arming_the_wake_up_timer_before_hal_rtc_init_is_a_call_order_defect() -> None:
    path = BAD / "hal" / "power_rtc_wakeup_before_init.c"
    conf = (BAD / "hal" / "support" / "stm32h7xx_hal_conf.h").read_text()
    conf = conf.replace(
        "#define HAL_GPIO_MODULE_ENABLED", "#define HAL_GPIO_MODULE_ENABLED\n#define HAL_RTC_MODULE_ENABLED"
    )
    conf = conf.replace(
        '#include "stm32h7xx_hal_gpio.h"', '#include "stm32h7xx_hal_gpio.h"\n#include "stm32h7xx_hal_rtc.h"'
    )
    result = verify_sources({"Src/main.c": path.read_text(), "Inc/stm32h7xx_hal_conf.h": conf}, "hal", None)
    assert {e.code for e in result.evidence} == {"E_CALL_ORDER"}, [
        (e.code, e.location, e.message) for e in result.evidence
    ]
    line = next(i + 1 for i, text in enumerate(path.read_text().splitlines()) if "expect:" in text)
    assert f"Src/main.c:{line} in main()" in {e.location for e in result.evidence}
    fixed = path.read_text().replace(
        "    if (HAL_RTCEx_SetWakeUpTimer_IT",
        "    if (HAL_RTC_Init(&hrtc) != HAL_OK) {\n        return 1;\n    }\n    if (HAL_RTCEx_SetWakeUpTimer_IT",
    )
    again = verify_sources({"Src/main.c": fixed, "Inc/stm32h7xx_hal_conf.h": conf}, "hal", None)
    assert "E_CALL_ORDER" not in {e.code for e in again.evidence}
