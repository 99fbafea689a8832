"""Peripheral depth on the STM32Cube HAL: ``i2c_target`` in the HAL's listen mode, ``adc_sample``'s analog settings.

Both operations are lowered for the two HAL chips (STM32F407, STM32H743) and judged by the independent
verifier (``pipeline.run_plan``). The generated C is read back against the facts it was derived from: the
target's address in ``OwnAddress1``, the I2C event/error vectors from the SVD interrupt facts, the sampling
time constant the acquisition time maps onto (``hal.adc_sampling_cycles`` at the ADC clock), the oversampler's
ratio and shift, differential conversion and calibration. Where the chip's HAL driver facts lack a setting
(the F4 ADC: no oversampler, single-ended only, no calibration) the plan is refused with evidence naming the
unit, the setting and the fact, and every relaxation offered repairs the plan to one that lowers and verifies.
The verifier's two new order rules (HAL_I2C_Init before HAL_I2C_EnableListen_IT; the offset calibration before
HAL_ADC_Start) each catch a bad source.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from rac_fw.contract import Status, apply_patch
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.query import Clocks, adc_clock
from rac_fw.domains.firmware.lower import LoweringError, lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources
from rac_fw.resources import data_dir

BAD = Path(__file__).resolve().parent / "bad_sources" / "hal"
HAL_CHIPS = ("stm32f407", "stm32h743")
PREFIX = {"stm32f407": "stm32f4xx", "stm32h743": "stm32h7xx"}


def _plan(target: str, *ops: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"target": target, "framework": "hal", "operations": list(ops), **top}


def _files(data: dict[str, Any]) -> dict[str, str]:
    plan = parse_plan(data)
    target = load_target(data["target"])
    evidence = check(plan, target, "hal")
    assert evidence == [], [(e.code, e.location, e.message) for e in evidence]
    return lower(plan, target, "hal").files


def _passes(data: dict[str, Any]) -> None:
    result = run_plan(parse_plan(data), target=data["target"], framework="hal")
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]


TARGET = {"op": "i2c_target", "name": "regfile", "controller": "I2C1", "address": 0x42, "registers": 16}


# --- i2c_target ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("chip", HAL_CHIPS)
def test_i2c_target_example_is_clean_on_hal(chip: str) -> None:
    result = run_plan(data_dir("examples") / "i2c_target.yaml", target=chip, framework="hal")
    assert result.status is Status.PASS, [(e.code, e.location, e.message) for e in result.evidence]
    assert result.lowered is not None and "i2c_target:regfile" in result.lowered.receipt.realized


@pytest.mark.parametrize("chip", HAL_CHIPS)
def test_i2c_target_listen_mode_from_the_facts(chip: str) -> None:
    files = _files(_plan(chip, TARGET))
    main, prefix = files["Core/Src/main.c"], PREFIX[chip]
    it, msp = files[f"Core/Src/{prefix}_it.c"], files[f"Core/Src/{prefix}_hal_msp.c"]
    target = load_target(chip)
    vectors = {i.name for i in target.peripherals["I2C1"].interrupts}
    assert {"I2C1_EV", "I2C1_ER"} <= vectors
    # The 7-bit address shifted left by one, as HAL_I2C_Init takes OwnAddress1.
    assert "hi2c1.Init.OwnAddress1 = 0x84U;" in main
    # Vectors: one handler each, only the HAL dispatcher; both enabled in the MSP, declared in the header.
    assert re.search(r"void I2C1_EV_IRQHandler\(void\)\n\{\n    HAL_I2C_EV_IRQHandler\(&hi2c1\);\n\}", it)
    assert re.search(r"void I2C1_ER_IRQHandler\(void\)\n\{\n    HAL_I2C_ER_IRQHandler\(&hi2c1\);\n\}", it)
    assert "HAL_NVIC_EnableIRQ(I2C1_EV_IRQn);" in msp and "HAL_NVIC_EnableIRQ(I2C1_ER_IRQn);" in msp
    assert "void I2C1_EV_IRQHandler(void);" in files[f"Core/Inc/{prefix}_it.h"]
    # The listen-mode callbacks exist once each; arming happens after HAL_I2C_Init (MX_I2C1_Init in main first).
    for callback in ("AddrCallback", "SlaveRxCpltCallback", "SlaveTxCpltCallback", "ListenCpltCallback",
                     "ErrorCallback"):  # fmt: skip
        assert main.count(f"void HAL_I2C_{callback}(I2C_HandleTypeDef *hi2c") == 1, callback
    assert "HAL_I2C_Slave_Seq_Receive_IT(hi2c, &regfile_byte, 1U, I2C_FIRST_FRAME)" in main
    assert "HAL_I2C_Slave_Seq_Transmit_IT(hi2c, &regfile_regs[regfile_reg], 1U, I2C_NEXT_FRAME)" in main
    assert "% 16U" in main
    body = main[main.index("int main(void)") :]
    assert body.index("MX_I2C1_Init();") < body.index("regfile_listen();")
    # State shared between the I2C interrupt and the loop is volatile; the register file is the ISR's alone.
    for name in ("reg", "first", "wrote", "listening", "bus_fault", "errors"):
        assert re.search(rf"static volatile \w+ regfile_{name};", main), name
    # Printing stays in the loop: no callback calls rac_ok/rac_report.
    callbacks = main[main.index("void HAL_I2C_AddrCallback") : main.index("void Error_Handler")]
    assert "rac_ok" not in callbacks and "rac_report" not in callbacks and "HAL_UART_Transmit" not in callbacks


def test_two_targets_share_one_set_of_callbacks() -> None:
    second = {**TARGET, "name": "mirror", "controller": "I2C2", "address": 0x43, "registers": 8}
    main = _files(_plan("stm32h743", TARGET, second))["Core/Src/main.c"]
    assert main.count("void HAL_I2C_AddrCallback(") == 1
    addr = main[main.index("void HAL_I2C_AddrCallback(") :]
    addr = addr[: addr.index("\n}\n")]
    assert "hi2c == &hi2c1" in addr and "hi2c == &hi2c2" in addr
    assert "hi2c2.Init.OwnAddress1 = 0x86U;" in main
    _passes(_plan("stm32h743", TARGET, second))


def test_target_and_controller_on_one_i2c_is_unsupported() -> None:
    data = _plan(
        "stm32h743",
        TARGET,
        {"op": "i2c_transfer", "name": "probe", "device": "eeprom", "register_index": 0},
        resources={"devices": [{"name": "eeprom", "bus": "i2c", "controller": "I2C1", "address": 0x50,
                                "frequency_hz": 100000}]},
    )  # fmt: skip
    plan, target = parse_plan(data), load_target("stm32h743")
    assert check(plan, target, "hal") == []
    with pytest.raises(LoweringError) as caught:
        lower(plan, target, "hal")
    (evidence,) = caught.value.evidence
    assert evidence.code == "E_TARGET_UNSUPPORTED" and "I2C1" in evidence.message and "regfile" in evidence.message


@pytest.mark.parametrize("chip", HAL_CHIPS)
def test_unknown_controller_is_refused_with_controllers_of_the_svd(chip: str) -> None:
    data = _plan(chip, {**TARGET, "controller": "I2C9"})
    (hit,) = [e for e in check(parse_plan(data), load_target(chip), "hal") if e.code == "E_NO_PERIPHERAL"]
    assert hit.location == "operations[0].controller" and "I2C9" in hit.objects
    assert hit.relaxations and all(r.patch for r in hit.relaxations)
    for relaxation in hit.relaxations:
        _passes(apply_patch(data, relaxation.patch))


# --- adc_sample ---------------------------------------------------------------------------------------
def _sample(target: str, pin: str, **fields: Any) -> dict[str, Any]:
    return _plan(target, {"op": "adc_sample", "name": "vin", "channel": {"pin": pin}, **fields})


F4_PIN, H7_PIN, H7_NEGATIVE = "PA1", "PB1", "PB0"


@pytest.mark.parametrize(("chip", "pin"), [("stm32f407", F4_PIN), ("stm32h743", H7_PIN)])
@pytest.mark.parametrize("ticks", [1, 3, 20, 60, 100, 480])
def test_acquisition_ticks_map_to_the_shortest_constant_not_shorter(chip: str, pin: str, ticks: int) -> None:
    hal = load_target(chip).hal
    assert hal is not None
    name, cycles = min(((n, c) for n, c in hal.adc_sampling_cycles.items() if c >= ticks), key=lambda x: x[1])
    main = _files(_sample(chip, pin, acquisition_ticks=ticks))["Core/Src/main.c"]
    assert f"config.SamplingTime = ADC_SAMPLETIME_{name};" in main
    assert f"sampled for {cycles:g} cycles (asked: {ticks})" in main


@pytest.mark.parametrize(("chip", "pin"), [("stm32f407", F4_PIN), ("stm32h743", H7_PIN)])
def test_acquisition_us_is_converted_at_the_adc_clock(chip: str, pin: str) -> None:
    target = load_target(chip)
    clock = adc_clock(Clocks(target, "hal"))  # the HAL default clock tree (no core_clock in these plans)
    assert target.hal is not None and clock is not None
    wanted = 2 * clock[0] / 1e6  # 2 us in ADC clock cycles
    name = min((n for n, c in target.hal.adc_sampling_cycles.items() if c >= wanted),
               key=lambda n: target.hal.adc_sampling_cycles[n] if target.hal else 0)  # fmt: skip
    files = _files(_sample(chip, pin, acquisition_us=2))
    assert f"config.SamplingTime = ADC_SAMPLETIME_{name};" in files["Core/Src/main.c"]
    assert f"ADC_CLOCK_SYNC_PCLK_DIV{clock[1]}" in files["Core/Src/main.c"]


def test_h7_oversampling_differential_and_calibration() -> None:
    data = _sample("stm32h743", H7_PIN, negative=H7_NEGATIVE, resolution_bits=16, oversampling=4,
                   acquisition_ticks=60, calibrate=True)  # fmt: skip
    files = _files(data)
    main, msp = files["Core/Src/main.c"], files["Core/Src/stm32h7xx_hal_msp.c"]
    assert "hadc1.Init.OversamplingMode = ENABLE;" in main
    assert "hadc1.Init.Oversampling.Ratio = 16U;" in main
    assert "hadc1.Init.Oversampling.RightBitShift = ADC_RIGHTBITSHIFT_4;" in main
    assert "hadc1.Init.Resolution = ADC_RESOLUTION_16B;" in main
    assert "config.SingleDiff = ADC_DIFFERENTIAL_ENDED;" in main
    loop = main[main.index("for (;;)") :]
    calibration = loop.index("HAL_ADCEx_Calibration_Start(&hadc1, ADC_CALIB_OFFSET, ADC_DIFFERENTIAL_ENDED)")
    assert calibration < loop.index("HAL_ADC_ConfigChannel(&hadc1") < loop.index("HAL_ADC_Start(&hadc1)")
    # Offset binary around mid-scale 2^15; both inputs are analog pins.
    assert "(int32_t)raw - 32768" in main
    assert "/* PB1: analog input */" in msp and "/* PB0: analog input */" in msp
    _passes(data)


def test_h7_negative_input_must_be_the_channels_inn_pin() -> None:
    data = _sample("stm32h743", H7_PIN, negative="PA7")
    (hit,) = [e for e in check(parse_plan(data), load_target("stm32h743"), "hal") if e.code == "E_ADC_SETTING"]
    assert hit.location == "operations[0].negative" and "ADC1_INN5" in hit.message
    assert hit.relaxations[0].patch[0]["value"] == H7_NEGATIVE
    for relaxation in hit.relaxations:
        _passes(apply_patch(data, relaxation.patch))


def test_oversampling_owns_its_unit() -> None:
    data = _plan(
        "stm32h743",
        {"op": "adc_read", "name": "other", "channel": {"pin": "PA3"}},
        {"op": "adc_sample", "name": "vin", "channel": {"pin": H7_PIN}, "oversampling": 2},
    )
    plan, target = parse_plan(data), load_target("stm32h743")
    assert check(plan, target, "hal") == []
    with pytest.raises(LoweringError) as caught:
        lower(plan, target, "hal")
    assert {e.code for e in caught.value.evidence} == {"E_TARGET_UNSUPPORTED"}
    assert "other" in caught.value.evidence[0].message


#: Settings the F4's aditf2 ADC lacks under the HAL (and one beyond every sampling constant of either chip):
#: (id, target, pin, fields, field refused, magnitude units).
REFUSED = [
    ("f4-oversampling", "stm32f407", F4_PIN, {"oversampling": 3}, "oversampling", {"log2"}),
    ("f4-differential", "stm32f407", F4_PIN, {"negative": "PA2"}, "negative", set()),
    ("f4-calibration", "stm32f407", F4_PIN, {"calibrate": True}, "calibrate", set()),
    ("f4-acquisition-too-long", "stm32f407", F4_PIN, {"acquisition_ticks": 900}, "acquisition_ticks", {"cycles"}),
    ("f4-acquisition-us-too-long", "stm32f407", F4_PIN, {"acquisition_us": 900}, "acquisition_us", {"us"}),
    ("h7-acquisition-too-long", "stm32h743", H7_PIN, {"acquisition_ticks": 900}, "acquisition_ticks", {"cycles"}),
    ("h7-vdd-reference", "stm32h743", H7_PIN, {"reference": "vdd_1_4"}, "reference", set()),
]


@pytest.mark.parametrize(("chip", "pin", "fields", "field", "units"), [r[1:] for r in REFUSED],
                         ids=[r[0] for r in REFUSED])  # fmt: skip
def test_settings_the_hal_driver_lacks_are_refused_and_every_relaxation_repairs(
    chip: str, pin: str, fields: dict[str, Any], field: str, units: set[str]
) -> None:
    data = _sample(chip, pin, **fields)
    hits = [e for e in check(parse_plan(data), load_target(chip), "hal") if e.code == "E_ADC_SETTING"]
    assert len(hits) == 1, [(e.code, e.message) for e in hits]
    hit = hits[0]
    assert hit.location == f"operations[0].{field}"
    assert {"vin", "ADC1", field} <= set(hit.objects)
    assert units <= {m.unit for m in hit.magnitudes}
    assert hit.relaxations
    for relaxation in hit.relaxations:
        _passes(apply_patch(data, relaxation.patch))


def test_f4_refusal_cites_the_hal_driver_fact() -> None:
    data = _sample("stm32f407", F4_PIN, oversampling=2)
    (hit,) = [e for e in check(parse_plan(data), load_target("stm32f407"), "hal") if e.code == "E_ADC_SETTING"]
    assert "hal.adc_oversampling_max = 0" in hit.message and "STM32Cube HAL F4" in hit.message


def test_resolution_is_checked_on_hal() -> None:
    data = _sample("stm32f407", F4_PIN, resolution_bits=16)
    (hit,) = [e for e in check(parse_plan(data), load_target("stm32f407"), "hal") if e.code == "E_ADC_RESOLUTION"]
    _passes(apply_patch(data, hit.relaxations[0].patch))


# --- the verifier's order rules -----------------------------------------------------------------------
def _conf() -> str:
    conf = (BAD / "support" / "stm32h7xx_hal_conf.h").read_text()
    gpio, include = "#define HAL_GPIO_MODULE_ENABLED", '#include "stm32h7xx_hal_gpio.h"'
    conf = conf.replace(gpio, f"{gpio}\n#define HAL_I2C_MODULE_ENABLED")
    return conf.replace(include, f'{include}\n#include "stm32h7xx_hal_i2c.h"')


@pytest.mark.parametrize(
    ("name", "late"),
    [("periph_listen_before_init", "HAL_I2C_Init"), ("periph_start_before_calibration", "HAL_ADCEx_Calibration_Start")],
)
def test_order_rule_catches_its_bad_source(name: str, late: str) -> None:
    path = BAD / f"{name}.c"
    result = verify_sources({"Src/main.c": path.read_text(), "Inc/stm32h7xx_hal_conf.h": _conf()}, "hal", None)
    assert {e.code for e in result.evidence} == {"E_CALL_ORDER"}, [(e.code, e.message) for e in result.evidence]
    line = next(i + 1 for i, text in enumerate(path.read_text().splitlines()) if "expect:" in text)
    (hit,) = result.evidence
    assert hit.location == f"Src/main.c:{line} in main()" and late in hit.message


def test_order_rules_accept_the_fixed_sources() -> None:
    """The same sources with the prerequisite moved first verify clean: the rule judges order, nothing else."""
    listen = (BAD / "periph_listen_before_init.c").read_text()
    listen = listen.replace("    if (HAL_I2C_EnableListen_IT(&hi2c1) != HAL_OK) { /* expect: E_CALL_ORDER */",
                            "    if (HAL_I2C_Init(&hi2c1) != HAL_OK) {")
    listen = listen.replace("return HAL_I2C_Init(&hi2c1) == HAL_OK ? 0 : 1;",
                            "return HAL_I2C_EnableListen_IT(&hi2c1) == HAL_OK ? 0 : 1;")  # fmt: skip
    adc = (BAD / "periph_start_before_calibration.c").read_text()
    start = "    if (HAL_ADC_Start(&hadc1) != HAL_OK) { /* expect: E_CALL_ORDER */\n        return 1;\n    }\n"
    calibrate = ("    if (HAL_ADCEx_Calibration_Start(&hadc1, ADC_CALIB_OFFSET, ADC_DIFFERENTIAL_ENDED) != HAL_OK) {\n"
                 "        return 1;\n    }\n")  # fmt: skip
    assert start in adc and calibrate in adc
    adc = adc.replace(start + calibrate, calibrate + start.replace(" /* expect: E_CALL_ORDER */", ""))
    for source in (listen, adc):
        result = verify_sources({"Src/main.c": source, "Inc/stm32h7xx_hal_conf.h": _conf()}, "hal", None)
        assert result.evidence == [], [(e.code, e.message) for e in result.evidence]
