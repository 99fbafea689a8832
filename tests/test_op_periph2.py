"""Peripheral depth: DMA block chains, counter alarms, async UART TX, polled echo, I2C target, ADC settings.

Each seeded plan carries one violation of an operation's own obligations; its evidence must name the
objects in conflict (and magnitudes with units where a quantity is wrong), and every relaxation offered
must validate once applied: the patched plan goes through ``pipeline.run_plan`` (obligations, lowering,
the independent verifier) and passes. The clean examples' generated ``prj.conf`` and overlay are read
back with the verifier's own Kconfig and devicetree parsers, and the verifier's new rules (I2C target
callbacks in ISR context, readiness before registration, CONFIG_I2C_TARGET) each catch a bad source.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import require_tool

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.backends.base import BuildRequest, RunRequest
from rac_fw.domains.firmware.backends.gcc import GccBuilder
from rac_fw.domains.firmware.backends.qemu import QemuRunner
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower, write_artifact
from rac_fw.domains.firmware.obligations import CODES
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan, parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.domains.firmware.verify.config import parse_kconfig, parse_overlays
from rac_fw.domains.firmware.verify.console import plan_expectations
from rac_fw.resources import data_dir

SOURCES = Path(__file__).resolve().parent / "bad_sources" / "zephyr"


def _scatter(target: str, size: int = 1024, **fields: Any) -> dict[str, Any]:
    op = {"op": "dma_scatter", "name": "gather", "src": "s", "dst": "d", "blocks": 4, **fields}
    buffers = [{"name": n, "size_bytes": size, "role": "dma_mem"} for n in ("s", "d")]
    return {"target": target, "framework": "zephyr", "resources": {"buffers": buffers}, "operations": [op]}


def _alarm(**fields: Any) -> dict[str, Any]:
    op = {"op": "counter_alarm", "name": "tick", "counter": "RTC2", "delay_us": 250_000, **fields}
    return {"target": "nrf52840", "framework": "zephyr", "operations": [op]}


def _target(**fields: Any) -> dict[str, Any]:
    op = {"op": "i2c_target", "name": "regs", "controller": "I2C1", "address": 0x42, **fields}
    return {"target": "stm32f407", "framework": "zephyr", "operations": [op]}


@dataclass(frozen=True)
class Seeded:
    id: str
    plan: dict[str, Any]
    code: str
    location: str
    objects: tuple[str, ...]
    magnitude: tuple[str, str] | None = None
    """(name, unit) of a magnitude the evidence must carry."""


SEEDED = [
    Seeded(
        "scatter-blocks-do-not-split-the-buffer",
        _scatter("native_sim", size=1000, blocks=3),
        "E_DMA_BLOCKS",
        "operations[0].blocks",
        ("gather", "s"),
        ("size", "bytes"),
    ),
    Seeded(
        # dma_stm32 programs head_block only: a 4-block chain in one dma_config is not walked.
        "scatter-chain-beyond-the-driver",
        _scatter("stm32f407"),
        "E_DMA_BLOCKS",
        "operations[0].chain",
        ("gather", "DMA2"),
        ("limit", "count"),
    ),
    Seeded(
        # A HAL stream takes one block per HAL_DMA_Start_IT: the HAL realization chains in software.
        "scatter-hardware-chain-on-hal",
        {**_scatter("stm32h743"), "framework": "hal"},
        "E_DMA_BLOCKS",
        "operations[0].chain",
        ("gather", "DMA1"),
        ("limit", "count"),
    ),
    Seeded(
        # dma-emul answers dma_get_status with -ENOSYS.
        "scatter-status-on-the-emulator",
        _scatter("native_sim", status=True),
        "E_DMA_STATUS",
        "operations[0].status",
        ("gather", "DMA"),
    ),
    Seeded(
        # RTC2: 24 bits at 32768 Hz hold 512 s.
        "alarm-beyond-the-counter-top",
        _alarm(delay_us=600_000_000),
        "E_COUNTER_RANGE",
        "operations[0].delay_us",
        ("tick", "RTC2"),
        ("limit", "us"),
    ),
    Seeded(
        "alarm-shorter-than-a-tick",
        _alarm(delay_us=10),
        "E_COUNTER_RANGE",
        "operations[0].delay_us",
        ("tick", "RTC2"),
        ("tick", "us"),
    ),
    Seeded(
        "alarm-on-a-missing-channel",
        _alarm(channel=5),
        "E_COUNTER_CHANNEL",
        "operations[0].channel",
        ("tick", "RTC2"),
        ("channels", "count"),
    ),
    Seeded(
        "two-alarms-on-one-channel",
        {
            "target": "native_sim",
            "framework": "zephyr",
            "operations": [
                {"op": "counter_alarm", "name": "slow", "delay_us": 50_000},
                {"op": "counter_alarm", "name": "fast", "delay_us": 20_000},
            ],
        },
        "E_COUNTER_CHANNEL",
        "operations[1].channel",
        ("fast", "COUNTER0", "slow"),
    ),
    Seeded(
        # RTC1 is the kernel's system timer: not offered to plans.
        "alarm-on-the-system-timer",
        _alarm(counter="RTC1"),
        "E_NO_PERIPHERAL",
        "operations[0].counter",
        ("RTC1", "nRF52840-DK"),
    ),
    Seeded(
        "two-async-callbacks-on-the-console",
        {
            "target": "nrf52840",
            "framework": "zephyr",
            "operations": [
                {"op": "uart_tx_async", "name": "first", "message": "one"},
                {"op": "uart_tx_async", "name": "second", "message": "two"},
            ],
        },
        "E_UART_CALLBACK_SHARED",
        "operations[1]",
        ("first", "second"),
    ),
    Seeded(
        # An interrupt-driven receiver before the sender: UART_0_INTERRUPT_DRIVEN turns uart0's async API off.
        "async-tx-beside-an-interrupt-receiver",
        {
            "target": "nrf52840",
            "framework": "zephyr",
            "operations": [
                {"op": "uart_rx_irq", "name": "rx", "ring_bytes": 32},
                {"op": "uart_tx_async", "name": "tx", "message": "two"},
            ],
        },
        "E_UART_CALLBACK_SHARED",
        "operations[1]",
        ("tx", "rx"),
    ),
    Seeded(
        "target-address-of-a-declared-device",
        {
            **_target(),
            "resources": {"devices": [{"name": "eeprom", "bus": "i2c", "controller": "I2C1", "address": 0x42}]},
        },
        "E_I2C_ADDRESS",
        "operations[0].address",
        ("regs", "eeprom", "0x42"),
    ),
    Seeded(
        "target-on-a-controller-the-board-lacks",
        _target(controller="I2C3"),
        "E_NO_PERIPHERAL",
        "operations[0].controller",
        ("I2C3", "STM32F407G-DISC1"),
    ),
]


def _adc(target: str, pin: str, **fields: Any) -> dict[str, Any]:
    op = {"op": "adc_sample", "name": "vin", "channel": {"pin": pin}, **fields}
    return {"target": target, "framework": "zephyr", "operations": [op]}


SEEDED += [
    Seeded(
        # Zephyr's stm32f4 adc1 node: st,adc-oversampler = "none".
        "adc-oversampling-without-an-oversampler",
        _adc("stm32f407", "PA1", oversampling=2),
        "E_ADC_SETTING",
        "operations[0].oversampling",
        ("vin", "ADC1", "oversampling"),
        ("limit", "log2"),
    ),
    Seeded(
        "adc-acquisition-time-the-saadc-lacks",
        _adc("nrf52840", "P0.02", acquisition_us=7),
        "E_ADC_SETTING",
        "operations[0].acquisition_us",
        ("vin", "SAADC", "acquisition_us"),
        ("acquisition", "us"),
    ),
    Seeded(
        "adc-acquisition-in-us-on-a-cycle-counted-unit",
        _adc("stm32f407", "PA1", acquisition_us=3),
        "E_ADC_SETTING",
        "operations[0].acquisition_us",
        ("vin", "ADC1", "acquisition_us"),
    ),
    Seeded(
        "adc-sampling-time-not-in-the-list",
        _adc("stm32f407", "PA1", acquisition_ticks=20),
        "E_ADC_SETTING",
        "operations[0].acquisition_ticks",
        ("vin", "ADC1", "acquisition_ticks"),
        ("acquisition", "cycles"),
    ),
    Seeded(
        "adc-differential-on-a-single-ended-unit",
        _adc("stm32f407", "PA1", negative="PA2"),
        "E_ADC_SETTING",
        "operations[0].negative",
        ("vin", "ADC1", "negative"),
    ),
    Seeded(
        "adc-negative-input-not-analog",
        _adc("nrf52840", "P0.02", negative="P0.10"),
        "E_ADC_SETTING",
        "operations[0].negative",
        ("vin", "SAADC", "negative"),
    ),
    Seeded(
        "adc-vdd-reference-the-unit-lacks",
        _adc("stm32f407", "PA1", reference="vdd_1_4"),
        "E_ADC_SETTING",
        "operations[0].reference",
        ("vin", "ADC1", "reference"),
    ),
    Seeded(
        "adc-calibration-the-driver-lacks",
        _adc("stm32f407", "PA1", calibrate=True),
        "E_ADC_SETTING",
        "operations[0].calibrate",
        ("vin", "ADC1", "calibrate"),
    ),
]


def _two_spi(second_cs: str) -> dict[str, Any]:
    plan = load_plan(data_dir("examples") / "spi_two_devices.yaml").model_dump(mode="json", exclude_none=True)
    plan["resources"]["devices"][1]["chip_select"] = second_cs
    return plan


SEEDED += [
    Seeded(
        "spi-devices-sharing-a-chip-select",
        _two_spi("P1.12"),
        "E_PIN_CONFLICT",
        "resources.devices[1].chip_select",
        ("P1.12", "flash", "env"),
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
        assert case.magnitude in {(m.name, m.unit) for m in evidence.magnitudes}, evidence.magnitudes
    assert evidence.relaxations, f"{case.id}: no relaxation offered"
    assert case.code in CODES
    for relaxation in evidence.relaxations:
        patched = apply_patch(copy.deepcopy(case.plan), relaxation.patch)
        after = run_plan(patched)
        assert after.status is Status.PASS, (
            relaxation.description,
            [(e.code, e.location, e.message) for e in after.evidence],
        )


def _files(plan: dict[str, Any] | Path) -> dict[str, str]:
    parsed = load_plan(plan) if isinstance(plan, Path) else parse_plan(plan)
    assert parsed.target is not None
    return lower(parsed, load_target(parsed.target), parsed.framework or "zephyr").files


def test_scatter_on_native_sim_configures_the_emulated_controller() -> None:
    """native_sim's dma-emul node has no channel or request counts and needs 64-bit addresses on /64."""
    example = data_dir("examples") / "dma_scatter.yaml"
    assert run_plan(example).status is Status.PASS
    files = _files(example)
    conf = parse_kconfig(files["prj.conf"])
    assert (conf["DMA"], conf["DMA_EMUL"], conf["DMA_64BIT"]) == ("y", "y", "y")
    overlay = files["boards/native_sim_native_64.overlay"]
    assert re.search(r"&dma \{[^}]*dma-channels = <4>;[^}]*dma-requests = <16>;", overlay), overlay
    assert "dma" in {label for label, _ in parse_overlays(files).references}
    main = files["src/main.c"]
    assert ".block_count = 4U" in main and "next_block = (i + 1U < 4U) ? &block[i + 1U] : NULL" in main
    assert "dma_stop(app_gather_dma, channel)" in main
    assert "app_copies_react();" in main


def test_software_chain_configures_one_block_at_a_time_and_polls_status() -> None:
    plan = _scatter("stm32f407", chain="software", status=True)
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    main = _files(plan)["src/main.c"]
    assert ".block_count = 1U" in main and "dma_get_status(app_gather_dma, channel, &st)" in main


def test_hal_chain_and_async_tx_complete_in_their_interrupt_callbacks() -> None:
    plan = load_plan(Path(__file__).parent / "plans" / "stm32f407_hal_periph2.yaml")
    assert run_plan(plan).status is Status.PASS
    main = lower(plan, load_target("stm32f407"), "hal").files["Core/Src/main.c"]
    callback = main[main.index("static void gather_complete(DMA_HandleTypeDef *hdma)") :]
    assert "HAL_DMA_Start_IT(hdma, (uint32_t)&gather_src[next * 256U]" in callback
    assert "HAL_DMA_Abort_IT(&" in main and "__HAL_DMA_GET_COUNTER(&" in main
    assert "HAL_UART_Transmit_IT(&husart2, hello_async_text, 33U)" in main
    assert "void HAL_UART_TxCpltCallback(UART_HandleTypeDef *huart)" in main
    handlers = lower(plan, load_target("stm32f407"), "hal").files["Core/Src/stm32f4xx_it.c"]
    assert "void USART2_IRQHandler(void)" in handlers


def test_dma_mem2mem_now_lowers_on_native_sim() -> None:
    plan = load_plan(data_dir("examples") / "dma_h7_cache.yaml")
    result = run_plan(plan, target="native_sim", framework="zephyr")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]


def test_counter_on_an_stm32_timer_enables_its_counter_child_node() -> None:
    plan = {
        "target": "stm32f407",
        "framework": "zephyr",
        "operations": [{"op": "counter_alarm", "name": "tick", "counter": "TIM2", "delay_us": 1000}],
    }
    assert run_plan(copy.deepcopy(plan)).status is Status.PASS
    files = _files(plan)
    assert re.search(r"&timers2 \{[^}]*counter \{ status = \"okay\"; \};", files["boards/stm32f4_disco.overlay"])
    assert "DEVICE_DT_GET(DT_CHILD(DT_NODELABEL(timers2), counter))" in files["src/main.c"]
    assert parse_kconfig(files["prj.conf"])["COUNTER"] == "y"


def test_counter_example_rearms_from_the_alarm_callback() -> None:
    example = data_dir("examples") / "counter_alarm.yaml"
    assert run_plan(example).status is Status.PASS
    main = _files(example)["src/main.c"]
    assert "counter_us_to_ticks(app_tick_dev, 250000ULL)" in main
    assert "counter_set_channel_alarm(dev, chan_id, &app_tick_alarm)" in main and "app_ticks_react();" in main


def test_async_tx_publishes_done_from_the_tx_done_event() -> None:
    example = data_dir("examples") / "uart_tx_async.yaml"
    assert run_plan(example).status is Status.PASS
    files = _files(example)
    assert parse_kconfig(files["prj.conf"])["UART_ASYNC_API"] == "y"
    main = files["src/main.c"]
    done = main.index("case UART_TX_DONE:")
    assert done < main.index("app_sent_react();") < main.index("case UART_TX_ABORTED:")


def test_async_tx_is_refused_where_the_driver_polls_only() -> None:
    result = run_plan(data_dir("examples") / "uart_tx_async.yaml", target="native_sim", framework="zephyr")
    assert result.status is Status.INVALID
    assert {e.code for e in result.evidence} == {"E_TARGET_UNSUPPORTED"}


def test_i2c_target_registers_with_the_target_kconfig() -> None:
    example = data_dir("examples") / "i2c_target.yaml"
    assert run_plan(example).status is Status.PASS
    files = _files(example)
    assert parse_kconfig(files["prj.conf"])["I2C_TARGET"] == "y"
    main = files["src/main.c"]
    assert "i2c_target_register(app_regfile_bus, &app_regfile_config)" in main and ".address = 0x42," in main


def test_two_spi_devices_get_one_chip_select_each() -> None:
    example = data_dir("examples") / "spi_two_devices.yaml"
    assert run_plan(example).status is Status.PASS
    files = _files(example)
    overlay = files["boards/nrf52840dk_nrf52840.overlay"]
    assert "app-jedec-cs-gpios = <&gpio1 12 GPIO_ACTIVE_LOW>;" in overlay, overlay
    assert "app-chipid-cs-gpios = <&gpio1 13 GPIO_ACTIVE_LOW>;" in overlay
    main = files["src/main.c"]
    assert main.count("spi_transceive_dt(") == 2 and ".frequency = 8000000U" in main and ".frequency = 1000000U" in main


def test_adc_sample_writes_the_analog_settings_into_the_channel_node() -> None:
    example = data_dir("examples") / "adc_sample.yaml"
    assert run_plan(example).status is Status.PASS
    files = _files(example)
    overlay = files["boards/nrf52840dk_nrf52840.overlay"]
    for line in (
        "zephyr,oversampling = <4>;",
        "zephyr,acquisition-time = <ADC_ACQ_TIME(ADC_ACQ_TIME_MICROSECONDS, 10)>;",
        'zephyr,reference = "ADC_REF_VDD_1_4";',
        "zephyr,differential;",
        "zephyr,input-negative = <NRF_SAADC_AIN1>;",
    ):
        assert line in overlay, line
    assert "ADC_ACQ_TIME_DEFAULT" not in overlay and 'zephyr,reference = "ADC_REF_INTERNAL"' not in overlay
    assert "sequence.calibrate = true;" in files["src/main.c"]


def test_polled_echo_builds_warning_free_and_echoes_in_qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bare metal on QEMU's netduinoplus2 (STM32F4 USART2 = serial1): built with -Wall -Wextra -Werror."""
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    monkeypatch.setenv("RAC_FW_CACHE", str(tmp_path / "cache"))
    plan = load_plan(data_dir("examples") / "uart_poll_echo.yaml")
    src = tmp_path / "src"
    write_artifact(lower(plan, load_target("stm32f407"), "baremetal"), src)
    built = GccBuilder().build(BuildRequest(src, "stm32f407", "baremetal", tmp_path / "build"))
    assert built.ok and built.image is not None, [e.message for e in built.evidence]
    expect = plan_expectations(plan, "USART2")
    ran = QemuRunner().run(
        RunRequest(built.image, "stm32f407", expect, 10.0, tmp_path / "run"), console_input=b"ping\n"
    )
    assert ran.ok, (ran.output, [e.message for e in ran.evidence])
    lines = ran.output.splitlines()
    assert "ping" in lines and "rac: echo ok polled echoed=5" in lines and lines[-1] == "rac: done"
    # The H7 layout (ISR/RDR, overrun cleared through ICR) builds warning-free too (QEMU models no H7 board).
    write_artifact(lower(plan, load_target("stm32h743"), "baremetal"), tmp_path / "h7")
    h7 = GccBuilder().build(BuildRequest(tmp_path / "h7", "stm32h743", "baremetal", tmp_path / "h7build"))
    assert h7.ok, [e.message for e in h7.evidence]


def test_polled_echo_on_zephyr_uses_poll_in_and_poll_out() -> None:
    result = run_plan(data_dir("examples") / "uart_poll_echo.yaml", target="native_sim", framework="zephyr")
    assert result.status is Status.PASS, [(e.code, e.message) for e in result.evidence]
    plan = load_plan(data_dir("examples") / "uart_poll_echo.yaml")
    main = lower(plan, load_target("native_sim"), "zephyr").files["src/main.c"]
    assert "uart_poll_in(app_echo_uart, &ch)" in main and "uart_poll_out(app_echo_uart, ch)" in main


#: Bad source → its prj.conf (under support/).
CASES = {
    "periph_i2c_target_callback_sleeps": "periph_prj.conf",
    "periph_i2c_target_before_ready": "periph_prj.conf",
    "periph_i2c_target_no_kconfig": "periph_no_target_prj.conf",
}


def _expected(text: str) -> tuple[str, int]:
    lines = text.splitlines()
    return next((m.group(1), i + 1) for i, t in enumerate(lines) if (m := re.search(r"expect: (E_\w+)", t)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_periph_defect_is_caught(name: str) -> None:
    text = (SOURCES / f"{name}.c").read_text()
    code, line = _expected(text)
    files = {"src/main.c": text, "prj.conf": (SOURCES / "support" / CASES[name]).read_text()}
    result = verify_sources(files, "zephyr", None)
    assert {e.code for e in result.evidence} == {code}, [(e.code, e.location, e.message) for e in result.evidence]
    if code != "E_KCONFIG_MISSING":
        assert any((e.location or "").startswith(f"src/main.c:{line}") for e in result.evidence), result.evidence


def test_every_periph_bad_source_is_exercised_and_its_twin_is_clean() -> None:
    assert {p.stem for p in SOURCES.glob("periph_*.c")} == set(CASES)
    fixed = (
        (SOURCES / "periph_i2c_target_callback_sleeps.c")
        .read_text()
        .replace("\tk_msleep(1); /* expect: E_ISR_BLOCKING */\n", "")
    )
    conf = (SOURCES / "support" / "periph_prj.conf").read_text()
    result = verify_sources({"src/main.c": fixed, "prj.conf": conf}, "zephyr", None)
    assert result.ok, [(e.code, e.location, e.message) for e in result.evidence]
