"""Devicetree as plan content (pin groups, DMA channels, in-app drivers), the core clock request and CAN.

Each seeded plan carries one violation of an obligation of the ``devicetree:`` block, ``core_clock`` or the
CAN operations; its evidence must name the objects in conflict (with magnitudes and units where a quantity
is wrong) and every relaxation offered must validate once applied: the patched plan goes through
``pipeline.run_plan`` (obligations, lowering, the independent verifier) and passes. The clean plans'
overlays are read back with the verifier's devicetree parser, and the numbers (PLL settings, CAN bit
timings, DMA streams) are checked against the reference manuals and Zephyr's own calculation.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.can import bit_timing, can_controller
from rac_fw.domains.firmware.facts.clock import pll_setting
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import CODES
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.clocks import plan_clocks
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.verify.config import parse_kconfig, parse_overlays
from rac_fw.resources import data_dir

BLINK = {"op": "gpio_blink", "name": "beat", "led": "led0", "period_ms": 500}


def _dt(target: str, block: dict[str, Any], ops: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"target": target, "framework": "zephyr", "devicetree": block, "operations": ops or [BLINK]}


def _clock(target: str, mhz: int) -> dict[str, Any]:
    return {"target": target, "framework": "zephyr", "operations": [{"op": "core_clock", "name": "cpu", "mhz": mhz}]}


def _can(target: str, **fields: Any) -> dict[str, Any]:
    op = {"op": "can_send", "name": "tx", "id": 0x123, "timeout_ms": 100, **fields}
    return {"target": target, "framework": "zephyr", "operations": [op]}


@dataclass(frozen=True)
class Seeded:
    id: str
    plan: dict[str, Any]
    code: str
    location: str
    objects: tuple[str, ...]
    magnitude: tuple[str, str] | None = None


SEEDED = [
    # --- pin groups: STM32 alternate functions (pins.json) and nRF PSEL -----------------------------------
    Seeded(
        "pin-without-the-alternate-function",
        _dt("stm32f407", {"pinctrl": [{"peripheral": "USART3", "pins": {"tx": "PA0", "rx": "PD9"}}]}),
        "E_DT_PINCTRL",
        "devicetree.pinctrl[0].pins.tx",
        ("USART3", "PA0", "USART3_TX"),
    ),
    Seeded(
        "pin-wired-to-a-board-led",
        _dt("nrf52840", {"pinctrl": [{"peripheral": "TWIM1", "pins": {"scl": "P0.13", "sda": "P0.26"}}]}),
        "E_DT_PINCTRL",
        "devicetree.pinctrl[0].pins.scl",
        ("TWIM1", "P0.13"),
    ),
    Seeded(
        "i2c-group-without-sda",
        _dt("stm32h743", {"pinctrl": [{"peripheral": "I2C2", "pins": {"scl": "PF1"}}]}),
        "E_DT_PINCTRL",
        "devicetree.pinctrl[0].pins",
        ("I2C2", "sda"),
    ),
    Seeded(
        "pin-shared-by-two-groups",
        _dt("nrf52840", {"pinctrl": [{"peripheral": "UARTE1", "pins": {"tx": "P1.02", "rx": "P1.01"}},
                                     {"peripheral": "TWIM1", "pins": {"scl": "P1.02", "sda": "P1.03"}}]}),  # fmt: skip
        "E_DT_PINCTRL",
        "devicetree.pinctrl[1].pins.scl",
        ("TWIM1", "P1.02"),
    ),
    Seeded(
        "peripheral-the-chip-lacks",
        _dt("stm32f407", {"pinctrl": [{"peripheral": "FDCAN1", "pins": {"tx": "PD1", "rx": "PD0"}}]}),
        "E_DT_PINCTRL",
        "devicetree.pinctrl[0].peripheral",
        ("FDCAN1", "stm32f407"),
    ),
    # --- DMA channels: RM0090 fixed mapping, H7 DMAMUX lines, nRF EasyDMA ---------------------------------
    Seeded(
        "dmas-on-easydma",
        _dt("nrf52840", {"dmas": [{"peripheral": "UARTE1", "direction": "rx"}]}),
        "E_DT_DMA",
        "devicetree.dmas[0]",
        ("UARTE1", "UARTE1_RX"),
    ),
    Seeded(
        "dmas-listed-twice",
        _dt("stm32f407", {"dmas": [{"peripheral": "USART2", "direction": "rx"},
                                   {"peripheral": "USART2", "direction": "rx"}]}),  # fmt: skip
        "E_DT_DMA",
        "devicetree.dmas[1]",
        ("USART2", "USART2_RX"),
    ),
    # --- in-app drivers ------------------------------------------------------------------------------------
    Seeded(
        "driver-no-node-uses",
        _dt("nrf52840", {"drivers": [{"compatible": "acme,th06", "channels": [
            {"channel": "ambient_temp", "reg": 0xE3, "scale_micro": 2681}]}]}),  # fmt: skip
        "E_DT_DRIVER",
        "devicetree.drivers[0].compatible",
        ("acme,th06",),
    ),
    # --- core clock --------------------------------------------------------------------------------------
    Seeded(
        "core-clock-above-the-limit",
        _clock("stm32f407", 200),
        "E_CLOCK_LIMIT",
        "operations[0].mhz",
        ("cpu", "stm32f407"),
        ("limit", "MHz"),
    ),
    Seeded(
        # RM0090: the VCO runs 100-432 MHz and P is 2, 4, 6 or 8, so 11 MHz needs a VCO of 22-88 MHz: none.
        "core-clock-the-pll-cannot-make",
        _clock("stm32f407", 11),
        "E_CLOCK_UNREACHABLE",
        "operations[0].mhz",
        ("cpu", "stm32f407", "pll"),
        ("requested", "MHz"),
    ),
    Seeded(
        "core-clock-on-a-fixed-clock",
        _clock("nrf52840", 128),
        "E_CLOCK_FIXED",
        "operations[0].mhz",
        ("cpu", "nrf52840"),
        ("fixed", "MHz"),
    ),
    Seeded(
        "core-clock-requested-twice",
        {**_clock("stm32h743", 400), "operations": [{"op": "core_clock", "name": "cpu", "mhz": 400},
                                                     {"op": "core_clock", "name": "again", "mhz": 400}]},  # fmt: skip
        "E_CLOCK_CONFLICT",
        "operations[1]",
        ("again",),
    ),
    Seeded(
        "core-clock-not-an-esp-idf-cpu-choice",
        {**_clock("esp32s3", 200), "framework": "espidf"},
        "E_CLOCK_UNREACHABLE",
        "operations[0].mhz",
        ("cpu", "esp32s3"),
        ("requested", "MHz"),
    ),
    # --- CAN -------------------------------------------------------------------------------------------------
    Seeded(
        "can-bitrate-the-clock-cannot-divide",
        _can("stm32f407", bitrate=333_333),
        "E_CAN_BITRATE",
        "operations[0].bitrate",
        ("tx", "CAN2"),
        ("kernel_clock", "Hz"),
    ),
    Seeded(
        # core_clock 100 MHz → APB1 /4 = 25 MHz: 500 kbit/s is 50 quanta, and no prescaler of 25 MHz keeps the
        # sample point within 50 permille of 87.5 % with TSEG1 <= 16, TSEG2 <= 8 (Zephyr's calculation).
        "can-bitrate-after-a-core-clock-request",
        {**_can("stm32f407", bitrate=500_000), "operations": [
            {"op": "core_clock", "name": "cpu", "mhz": 100},
            {"op": "can_send", "name": "tx", "id": 0x123, "timeout_ms": 100, "bitrate": 500_000}]},  # fmt: skip
        "E_CAN_BITRATE",
        "operations[1].bitrate",
        ("tx", "CAN2"),
        ("kernel_clock", "Hz"),
    ),
    Seeded(
        "can-controller-without-pins",
        _can("stm32f407", controller="CAN1"),
        "E_CAN_PINS",
        "operations[0].controller",
        ("tx", "CAN1"),
    ),
    Seeded(
        "can-unknown-controller",
        _can("stm32h743", controller="FDCAN3"),
        "E_CAN_CONTROLLER",
        "operations[0].controller",
        ("tx", "FDCAN3", "NUCLEO-H743ZI"),
    ),
    Seeded(
        "can-standard-frame-with-29-bit-id",
        _can("native_sim", id=0x18FF50E5, mode="loopback"),  # the software controller delivers only in loopback
        "E_CAN_ID",
        "operations[0].id",
        ("tx", "0x18ff50e5"),
        ("identifier", "id"),
    ),
    Seeded(
        "can-two-bitrates-on-one-controller",
        {**_can("stm32h743"), "operations": [
            {"op": "can_send", "name": "tx", "id": 0x10, "timeout_ms": 100, "bitrate": 500_000},
            {"op": "can_receive", "name": "rx", "id": 0x11, "timeout_ms": 100, "bitrate": 250_000}]},  # fmt: skip
        "E_CAN_CONFLICT",
        "operations[1].bitrate",
        ("rx", "FDCAN1", "bitrate"),
    ),
]


@pytest.mark.parametrize("case", SEEDED, ids=lambda c: c.id)
def test_seeded_violation_names_its_objects_and_every_relaxation_validates(case: Seeded) -> None:
    result = run_plan(copy.deepcopy(case.plan))
    assert result.status is Status.INVALID
    matching = [e for e in result.evidence if e.code == case.code and e.location == case.location]
    assert matching, [(e.code, e.location, e.message) for e in result.evidence]
    evidence = matching[0]
    assert set(case.objects) <= set(evidence.objects), evidence.objects
    if case.magnitude is not None:
        assert case.magnitude in {(m.name, m.unit) for m in evidence.magnitudes}
    assert evidence.relaxations, f"{case.id}: no relaxation offered"
    assert case.code in CODES
    for relaxation in evidence.relaxations:
        after = run_plan(apply_patch(copy.deepcopy(case.plan), relaxation.patch))
        assert after.status is Status.PASS, (
            relaxation.description,
            [(e.code, e.location, e.message) for e in after.evidence],
        )


def _files(plan: dict[str, Any]) -> dict[str, str]:
    return lower(parse_plan(plan), load_target(plan["target"]), plan["framework"]).files


# --- pin control -------------------------------------------------------------------------------------------
def test_stm32_pin_group_uses_the_generated_pinctrl_labels() -> None:
    plan = _dt("stm32f407", {"pinctrl": [{"peripheral": "USART3", "pins": {"tx": "PD8", "rx": "PD9"}}]})
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    overlay = _files(plan)["boards/stm32f4_disco.overlay"]
    assert "pinctrl-0 = <&usart3_tx_pd8 &usart3_rx_pd9>;" in overlay and 'pinctrl-names = "default";' in overlay
    assert {"usart3_tx_pd8", "usart3_rx_pd9"} <= {label for label, _ in parse_overlays(_files(plan)).references}


def test_nrf_pin_group_is_a_psel_group_with_a_sleep_state_and_pulled_up_inputs() -> None:
    plan = _dt("nrf52840", {"pinctrl": [{"peripheral": "UARTE1", "pins": {"tx": "P1.02", "rx": "P1.01"}}]})
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    overlay = _files(plan)["boards/nrf52840dk_nrf52840.overlay"]
    default = overlay[overlay.index("rac_uart1_default: rac_uart1_default {"):overlay.index("rac_uart1_sleep:")]
    assert "psels = <NRF_PSEL(UART_TX, 1, 2)>;" in default
    assert "psels = <NRF_PSEL(UART_RX, 1, 1)>;\n\t\t\tbias-pull-up;" in default
    sleep = overlay[overlay.index("rac_uart1_sleep: rac_uart1_sleep {"):]
    assert sleep.count("low-power-enable;") == 2
    assert 'pinctrl-names = "default", "sleep";' in overlay and "pinctrl-1 = <&rac_uart1_sleep>;" in overlay
    assert {"rac_uart1_default", "rac_uart1_sleep"} <= parse_overlays(_files(plan)).labels


# --- DMA channels --------------------------------------------------------------------------------------------
def test_f4_dmas_follow_the_rm0090_request_mapping() -> None:
    """RM0090 Table 42: USART3_RX is DMA1 stream 1 channel 4, USART3_TX stream 3 (or 4) channel 4."""
    plan = load_plan(data_dir("examples") / "devicetree_pinctrl.yaml")
    assert run_plan(plan).status is Status.PASS
    overlay = lower(plan, load_target("stm32f407"), "zephyr").files["boards/stm32f4_disco.overlay"]
    assert (
        "dmas = <&dma1 1 4 STM32_DMA_PERIPH_RX STM32_DMA_FIFO_FULL>, <&dma1 3 4 STM32_DMA_PERIPH_TX "
        'STM32_DMA_FIFO_FULL>;\n\tdma-names = "rx", "tx";' in overlay
    )
    assert "#include <zephyr/dt-bindings/dma/stm32_dma.h>" in overlay and "&dma1 {" in overlay


def test_h7_dmas_take_dmamux_lines_on_distinct_streams() -> None:
    """RM0433 Table 121: USART2_RX is DMAMUX1 line 43, USART2_TX line 44; two entries never share a stream."""
    plan = _dt("stm32h743", {"pinctrl": [{"peripheral": "USART2", "pins": {"tx": "PD5", "rx": "PD6"}}],
                             "dmas": [{"peripheral": "USART2", "direction": "rx"},
                                      {"peripheral": "USART2", "direction": "tx"}]})  # fmt: skip
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    overlay = _files(plan)["boards/nucleo_h743zi.overlay"]
    assert "dmas = <&dmamux1 6 43 STM32_DMA_PERIPH_RX>, <&dmamux1 5 44 STM32_DMA_PERIPH_TX>;" in overlay
    assert "&dmamux1 {" in overlay


# --- the core clock ----------------------------------------------------------------------------------------
def test_pll_settings_reproduce_the_board_clocks_and_respect_the_ranges() -> None:
    """168 MHz on the F4 from 8 MHz: VCO input 2 MHz (M 4), VCO 336 MHz (N 168), P 2, Q 7 = 48 MHz exactly,
    APB1 /4 = 42 MHz, APB2 /2 = 84 MHz (RM0090 §6.3.2 limits). 480 MHz on the H7: HCLK /2 = 240 MHz."""
    f4 = pll_setting(load_target("stm32f407"), "zephyr", 168_000_000)
    assert f4 is not None and (f4.m, f4.n, f4.p, f4.q) == (4, 168, 2, 7) and f4.q_hz == 48_000_000
    assert f4.dividers == {"HCLK": 1, "APB1": 4, "APB2": 2}
    h7 = pll_setting(load_target("stm32h743"), "zephyr", 480_000_000)
    assert h7 is not None and h7.clocks_hz["HCLK"] == 240_000_000 and h7.clocks_hz["APB1"] == 120_000_000
    assert 192_000_000 <= h7.vco_hz <= 960_000_000 and (h7.p == 1 or h7.p % 2 == 0)
    low = pll_setting(load_target("stm32f407"), "zephyr", 84_000_000)
    assert low is not None and low.dividers == {"HCLK": 1, "APB1": 2, "APB2": 1}


def test_core_clock_lowers_into_the_pll_and_rcc_nodes() -> None:
    plan = load_plan(data_dir("examples") / "clock_core.yaml")
    assert run_plan(plan).status is Status.PASS
    files = lower(plan, load_target("stm32f407"), "zephyr").files
    overlay = files["boards/stm32f4_disco.overlay"]
    setting = pll_setting(load_target("stm32f407"), "zephyr", 120_000_000)
    assert setting is not None
    expected = (f"div-m = <{setting.m}>;", f"mul-n = <{setting.n}>;", f"div-p = <{setting.p}>;",
                f"div-q = <{setting.q}>;", "clock-frequency = <DT_FREQ_M(120)>;", "apb1-prescaler = <4>;")  # fmt: skip
    for line in expected:
        assert line in overlay, line
    assert 8_000_000 // setting.m * setting.n // setting.p == 120_000_000
    assert "SystemCoreClock == 120000000U" in files["src/main.c"]


def test_core_clock_on_esp_idf_is_the_kconfig_choice_read_back_at_start_up() -> None:
    plan = {**_clock("esp32s3", 240), "framework": "espidf"}
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    files = _files(plan)
    conf = parse_kconfig(files["sdkconfig.defaults"])
    assert conf["ESP_DEFAULT_CPU_FREQ_MHZ_240"] == "y"
    assert conf["ESP_DEFAULT_CPU_FREQ_MHZ_160"] == "n" and conf["ESP_DEFAULT_CPU_FREQ_MHZ_80"] == "n"
    assert "if (esp_rom_get_cpu_ticks_per_us() != 240U) {" in files["main/main.c"]


# --- CAN ---------------------------------------------------------------------------------------------------
def test_can_bit_timing_is_zephyrs_calculation() -> None:
    """500 kbit/s from bxCAN's 42 MHz APB1: prescaler 6 → 14 quanta, TSEG1 11 + TSEG2 2, 85.7 % sample point
    (Zephyr aims at 87.5 %); 333 333 bit/s divides 42 MHz into no whole number of quanta."""
    target = load_target("stm32f407")
    controller = can_controller(target, "CAN2")
    assert controller is not None
    timing = bit_timing(controller, 42_000_000, 500_000)
    assert timing is not None and timing.prescaler * timing.quanta * 500_000 == 42_000_000
    assert abs(timing.sample_point - 875) <= 50
    assert bit_timing(controller, 42_000_000, 333_333) is None


def test_a_core_clock_request_moves_the_bus_clocks_other_checks_read() -> None:
    target = load_target("stm32f407")
    plan = parse_plan({"target": "stm32f407", "operations": [{"op": "core_clock", "mhz": 100}]})
    assert plan_clocks(plan, target, "zephyr").hz("APB1") == 25_000_000
    assert plan_clocks(plan, target, "hal").hz("APB1") == 25_000_000  # the HAL set-up programs the same PLL
    assert plan_clocks(plan, target, "baremetal").hz("APB1") == 16_000_000  # not realized there: the defaults
    assert plan_clocks(parse_plan({"target": "stm32f407", "operations": [BLINK]}), target, "zephyr").hz(
        "APB1") == 42_000_000  # fmt: skip


def test_can_on_native_sims_loopback_controller() -> None:
    plan = load_plan(data_dir("examples") / "can_loopback.yaml")
    assert run_plan(plan).status is Status.PASS
    files = lower(plan, load_target("native_sim"), "zephyr").files
    main = files["src/main.c"]
    assert "DEVICE_DT_GET(DT_NODELABEL(can_loopback0))" in main and "can_set_bitrate" not in main
    assert main.index("can_set_mode(app_tx_can") < main.index("can_start(app_tx_can)") < main.index(
        "can_add_rx_filter_msgq("
    )
    assert "can_send(app_tx_can, &frame, K_MSEC(100), NULL, NULL)" in main
    assert parse_kconfig(files["prj.conf"])["CAN_LOOPBACK"] == "y"


def test_can_on_a_board_sets_bitrate_and_mode_before_start_with_pins_from_the_plan() -> None:
    plan = load_plan(data_dir("examples") / "devicetree_pinctrl.yaml")
    files = lower(plan, load_target("stm32f407"), "zephyr").files
    main, overlay = files["src/main.c"], files["boards/stm32f4_disco.overlay"]
    assert main.index("can_set_bitrate(app_frame_can, 250000U)") < main.index("can_set_mode(app_frame_can") < (
        main.index("can_start(app_frame_can)")
    )
    assert "CAN_MODE_LOOPBACK" in main and "pinctrl-0 = <&can1_tx_pd1 &can1_rx_pd0>;" in overlay
    assert parse_kconfig(files["prj.conf"])["CAN_STM32_BXCAN"] == "y"
