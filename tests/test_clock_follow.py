"""Other operations' clocks follow a ``core_clock`` request, and STM32Cube HAL realizes the request.

One view (``plan.clocks.plan_clocks``: the framework's default clocks with what ``core_clock`` sets laid over
them) is what the UART baud check, the counter/PWM ranges, SysTick, the cycle-counter wrap, CAN bit timing and
the lowerings' generation-time divisors ask. The HAL ``SystemClock_Config`` programs the PLL, the bus
prescalers, the regulator scale and the flash wait states of the chip's ``flash.voltage_scales`` (RM0090
Table 10, RM0433 Table 17) from the same PLL solution the Zephyr overlay takes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from seeded_kernel import seeded

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.clock import flash_setting, pll_setting
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.resources import data_dir

BEAT = {"op": "gpio_blink", "name": "beat", "led": "led0", "period_ms": 500}


def _plan(target: str, framework: str, *operations: dict[str, Any]) -> dict[str, Any]:
    return {"target": target, "framework": framework, "operations": [*operations, BEAT]}


def _codes(plan: dict[str, Any]) -> list[str]:
    return [e.code for e in run_plan(plan).evidence]


# --- the plan's clock view --------------------------------------------------------------------------------
def test_the_view_lays_the_requests_pll_over_the_defaults() -> None:
    """F407 at 120 MHz: AHB /1, APB1 /4 = 30 MHz, APB2 /2 = 60 MHz, the timer clocks doubled (prescaler != 1),
    the 48 MHz clock kept exact; the framework that does not realize core_clock keeps its defaults."""
    target = load_target("stm32f407")
    plan = parse_plan(_plan("stm32f407", "hal", {"op": "core_clock", "name": "cpu", "mhz": 120}))
    hal = plan_clocks(plan, target, "hal")
    assert [hal.hz(n) for n in ("SYSCLK", "HCLK", "APB1", "APB2", "APB1_TIM", "APB2_TIM", "PLL48CK")] == [
        120_000_000, 120_000_000, 30_000_000, 60_000_000, 60_000_000, 120_000_000, 48_000_000]
    assert hal.core_hz() == 120_000_000 and hal.hz("HSI") == 16_000_000  # untouched domains: the facts
    assert plan_clocks(plan, target, "zephyr").set_hz == hal.set_hz  # one PLL solution for both frameworks
    assert plan_clocks(plan, target, "baremetal").core_hz() == 16_000_000  # not realized: the defaults
    # A prescaler of 1 leaves the timer clock at the bus clock (RM0090 §6.2): 24 MHz, APB1 /1.
    slow = plan_clocks(parse_plan(_plan("stm32f407", "hal", {"op": "core_clock", "mhz": 24})), target, "hal")
    assert (slow.hz("APB1"), slow.hz("APB1_TIM")) == (24_000_000, 24_000_000)


def test_espidf_moves_only_the_cpu_clock() -> None:
    target = load_target("esp32s3")
    plan = parse_plan({"target": "esp32s3", "operations": [{"op": "core_clock", "mhz": 240}]})
    clocks = plan_clocks(plan, target, "espidf")
    assert clocks.set_hz == {"CPU": 240_000_000} and clocks.core_hz() == 240_000_000


# --- checks that follow the request -----------------------------------------------------------------------
@pytest.mark.parametrize("framework", ["hal", "zephyr"])
def test_a_baud_accepted_at_the_default_clock_is_refused_at_a_slow_core_clock(framework: str) -> None:
    """2 Mbaud on USART2: BRR 21 from the default 42 MHz APB1 (exact); at a 24 MHz core APB1 runs 24 MHz and the
    smallest 16x divider (16) gives 1.5 Mbaud, 25 % off."""
    fast = {"op": "uart_print", "name": "say", "message": "x", "baud": 2_000_000}
    assert _codes(_plan("stm32f407", framework, fast)) == []
    plan = _plan("stm32f407", framework, {"op": "core_clock", "name": "cpu", "mhz": 24}, fast)
    evidence, broken = seeded(plan, "E_BAUD_ERROR")
    assert broken == []
    assert {m.name: m.value for m in evidence.magnitudes} == {
        "requested": 2_000_000, "produced": 1_500_000, "error": 25.0, "limit": 2.0, "uart_clock": 24_000_000,
    }
    assert "24000000 Hz" in evidence.message and "USART2" in evidence.objects


def test_a_cycle_timing_wrap_moves_with_the_core_clock() -> None:
    """2^32 cycles: 25 565 282 µs at the F407's default 168 MHz, 35 791 394 µs at 120 MHz."""
    timing = {"op": "cycle_timing", "name": "t", "iterations": 10, "samples": 4, "deadline_us": 30_000_000}
    evidence, broken = seeded(_plan("stm32f407", "zephyr", timing), "E_CYCLE_COUNTER_WRAP")
    assert broken == [] and {m.name: m.value for m in evidence.magnitudes}["wrap"] == 25_565_282
    assert _codes(_plan("stm32f407", "zephyr", {"op": "core_clock", "mhz": 120}, timing)) == []
    faster = _plan("stm32f407", "zephyr", {"op": "core_clock", "mhz": 120}, {**timing, "deadline_us": 40_000_000})
    evidence, _ = seeded(faster, "E_CYCLE_COUNTER_WRAP")
    assert {m.name: m.value for m in evidence.magnitudes}["wrap"] == 35_791_394


def test_a_timer_range_moves_with_the_core_clock() -> None:
    """TIM3 (16-bit PSC and counter) on the APB1 timer clock: 84 MHz by default, so 60 s is beyond its
    65536 x 65536 / 84 MHz = 51.1 s; a 24 MHz core runs it at 24 MHz (178.9 s)."""
    timer = {"op": "timer_periodic", "name": "tick", "source": "TIM3", "period_ms": 60_000}
    assert "E_TIMER_RANGE" in _codes(_plan("stm32f407", "hal", timer))
    plan = _plan("stm32f407", "hal", {"op": "core_clock", "mhz": 24}, timer)
    assert _codes(plan) == []
    lowered = lower(parse_plan(plan), load_target("stm32f407"), "hal")
    main = lowered.files["Core/Src/main.c"]
    psc = int(re.search(r"htim3\.Init\.Prescaler = (\d+)U;", main).group(1))  # type: ignore[union-attr]
    arr = int(re.search(r"htim3\.Init\.Period = (\d+)U;", main).group(1))  # type: ignore[union-attr]
    # The divisor from the same 24 MHz timer clock the check judged with (84 MHz would not fit 16 bits twice).
    assert abs((psc + 1) * (arr + 1) / 24_000_000 / 60 - 1) < 1e-6


# --- the HAL realization --------------------------------------------------------------------------------
def _system_clock(main: str) -> str:
    start = main.index("static void SystemClock_Config(void)\n{")
    return main[start : main.index("\n}\n", start)]


def _field(body: str, name: str) -> int:
    found = re.search(rf"osc\.PLL\.{name} = (?:RCC_PLLP_DIV)?(\d+);", body)
    assert found is not None, name
    return int(found.group(1))


@pytest.mark.parametrize(
    ("target", "mhz", "hse", "scale", "latency", "hclk_div"),
    [
        ("stm32f407", 168, "RCC_HSE_ON", 1, 5, 1),  # RM0090 Table 10: 150 < 168 MHz <= 168 MHz -> 5 WS
        ("stm32h743", 400, "RCC_HSE_BYPASS", 1, 2, 2),  # RM0433 Table 17 VOS1: HCLK 200 MHz in ]140;210] -> 2 WS
        ("stm32h743", 480, "RCC_HSE_BYPASS", 0, 4, 2),  # VOS0 (over-drive): HCLK 240 MHz in ]225;240] -> 4 WS
    ],
)
def test_hal_system_clock_config_programs_the_request(
    target: str, mhz: int, hse: str, scale: int, latency: int, hclk_div: int
) -> None:
    plan = _plan(target, "hal", {"op": "core_clock", "name": "cpu", "mhz": mhz})
    result = run_plan(plan)
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    facts = load_target(target)
    main = lower(parse_plan(plan), facts, "hal").files["Core/Src/main.c"]
    body = _system_clock(main)
    m, n, p = _field(body, "PLLM"), _field(body, "PLLN"), _field(body, "PLLP")
    assert 8_000_000 // m * n // p == mhz * 1_000_000  # the 8 MHz HSE through the generated PLL
    setting = pll_setting(facts, "hal", mhz * 1_000_000)
    assert setting is not None and (m, n, p) == (setting.m, setting.n, setting.p)
    if setting.q is not None:  # F4: Q keeps the 48 MHz clock exact
        assert _field(body, "PLLQ") == setting.q and 8_000_000 // m * n // setting.q == 48_000_000
    else:  # H7 PLL1: Q and R divide like P; the input range and VCO range are named
        assert _field(body, "PLLQ") == _field(body, "PLLR") == p
        assert "osc.PLL.PLLRGE = RCC_PLL1VCIRANGE_2;" in body and "osc.PLL.PLLVCOSEL = RCC_PLL1VCOWIDE;" in body
    assert f"osc.HSEState = {hse};" in body and "RCC_SYSCLKSOURCE_PLLCLK" in body
    assert f"__HAL_PWR_VOLTAGESCALING_CONFIG(PWR_REGULATOR_VOLTAGE_SCALE{scale});" in body
    assert ("__HAL_RCC_SYSCFG_CLK_ENABLE();" in body) is (scale == 0)
    assert f"HAL_RCC_ClockConfig(&clk, FLASH_LATENCY_{latency})" in body
    ahb = "HCLK" if facts.hal is not None and facts.hal.rcc_domains else "SYSCLK"  # the H7 HAL names HPRE RCC_HCLK_DIVn
    assert f"clk.AHBCLKDivider = RCC_{ahb}_DIV{hclk_div};" in body
    found = flash_setting(facts, mhz * 1_000_000, mhz * 1_000_000 // hclk_div)
    assert found is not None and (found.scale, found.latency) == (scale, latency)
    # The check after the set-up: SYSCLK read back from the RCC and SystemCoreClock, printed with the line.
    assert f"sysclk == {mhz * 1_000_000}U && SystemCoreClock == {mhz * 1_000_000}U" in main
    assert 'rac_ok_text("cpu", rac_cpu_text);' in main and '"core=%luMHz"' in main and "FAIL core=" in main


def test_without_a_request_the_hal_tree_is_the_facts_default() -> None:
    """No core_clock: the F407 default (168 MHz PLL) and the H7 default (64 MHz HSI, VOS1, 0 WS) as before."""
    f4 = _system_clock(lower(parse_plan(_plan("stm32f407", "hal")), load_target("stm32f407"), "hal")
                       .files["Core/Src/main.c"])  # fmt: skip
    assert (_field(f4, "PLLM"), _field(f4, "PLLN"), _field(f4, "PLLP"), _field(f4, "PLLQ")) == (4, 168, 2, 7)
    h7 = _system_clock(lower(parse_plan(_plan("stm32h743", "hal")), load_target("stm32h743"), "hal")
                       .files["Core/Src/main.c"])  # fmt: skip
    assert "RCC_SYSCLKSOURCE_HSI" in h7 and "FLASH_LATENCY_0" in h7 and "PLLM" not in h7


def test_a_request_beyond_every_voltage_scale_is_the_limit_code() -> None:
    """481 MHz on the H7 exceeds the 480 MHz CPU limit (VOS0) on HAL as on Zephyr; the relaxation validates."""
    evidence, broken = seeded(_plan("stm32h743", "hal", {"op": "core_clock", "name": "cpu", "mhz": 481}),
                              "E_CLOCK_LIMIT")  # fmt: skip
    assert broken == [] and {m.name: m.value for m in evidence.magnitudes}["limit"] == 480


def test_the_core_clock_example_lowers_clean_on_hal() -> None:
    plan = load_plan(data_dir("examples") / "clock_core.yaml")
    result = run_plan(plan, framework="hal")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    main = lower(plan, load_target("stm32f407"), "hal").files["Core/Src/main.c"]
    body = _system_clock(main)
    assert 8_000_000 // _field(body, "PLLM") * _field(body, "PLLN") // _field(body, "PLLP") == 120_000_000
    assert "FLASH_LATENCY_3" in body  # RM0090 Table 10: 90 < 120 MHz <= 120 MHz


def test_the_h7_example_runs_480_mhz_at_vos0_on_hal_and_zephyr() -> None:
    path = data_dir("examples") / "clock_core_h7.yaml"
    for framework in ("hal", "zephyr"):
        result = run_plan(path, framework=framework)
        assert result.status is Status.PASS, (framework, [(e.code, e.message) for e in result.evidence])
    body = _system_clock(lower(load_plan(path), load_target("stm32h743"), "hal").files["Core/Src/main.c"])
    assert "PWR_REGULATOR_VOLTAGE_SCALE0" in body and "FLASH_LATENCY_4" in body


def test_the_kernel_tick_clock_follows_the_request() -> None:
    """FreeRTOS on HAL derives its SysTick reload from configCPU_CLOCK_HZ: the requested 120 MHz, not 168 MHz."""
    plan = yaml.safe_load((data_dir("examples") / "hal_rtos_kernel.yaml").read_text(encoding="utf-8"))
    plan["operations"].insert(0, {"op": "core_clock", "name": "cpu", "mhz": 120})
    assert run_plan(plan, framework="hal").status is Status.PASS
    config = lower(parse_plan(plan), load_target(plan["target"]), "hal").files["Core/Inc/FreeRTOSConfig.h"]
    assert "#define configCPU_CLOCK_HZ ((uint32_t)120000000UL)" in config
