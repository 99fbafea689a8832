"""gpio_set, the first operation written on the op-spec shape: one module, its template macros, this test.

It is realized on Zephyr, ESP-IDF, STM32 HAL and bare metal; the polarity comes from the board facts
(an active-low LED is driven low to be on), and the bare-metal build runs in QEMU.
"""

from __future__ import annotations

from pathlib import Path

from conftest import require_tool

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.plan.matrix import frameworks_for
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.resources import data_dir

EXAMPLE = data_dir("examples") / "gpio_set.yaml"


def _example(target: str) -> Plan:
    return load_plan(EXAMPLE).model_copy(update={"target": target})


def test_realized_on_every_framework_of_the_led_targets() -> None:
    for target_id, expected in (("nrf52840", {"zephyr", "baremetal"}), ("stm32f407", {"zephyr", "hal", "baremetal"})):
        assert set(frameworks_for("gpio_set", load_target(target_id))) == expected
    assert "espidf" in frameworks_for("gpio_set", load_target("esp32s3"))


def test_polarity_from_the_board_facts() -> None:
    nrf = load_target("nrf52840")  # LEDs are active low: on = drive low
    plan = _example("nrf52840")
    assert check(plan, nrf, "baremetal") == []
    main = lower(plan, nrf, "baremetal").files["src/main.c"]
    assert "P0->OUTCLR = 1UL << 14U" in main and "P0->OUTSET = 1UL << 13U" in main
    zephyr = lower(plan, nrf, "zephyr").files["src/main.c"]
    assert "gpio_pin_configure_dt(&app_status_on_out, GPIO_OUTPUT_ACTIVE)" in zephyr
    assert "#include <zephyr/drivers/gpio.h>" in zephyr
    f407 = load_target("stm32f407")  # LEDs are active high
    hal = lower(_example("stm32f407"), f407, "hal").files["Core/Src/main.c"]
    assert "HAL_GPIO_WritePin(GPIOD, GPIO_PIN_13, GPIO_PIN_SET)" in hal
    assert "HAL_GPIO_WritePin(GPIOD, GPIO_PIN_12, GPIO_PIN_RESET)" in hal


def test_espidf_on_a_declared_pin_sets_the_level_before_configuring() -> None:
    plan = Plan.model_validate(
        {
            "target": "esp32s3",
            "resources": {"pins": [{"name": "status", "pin": "GPIO2", "function": "GPIO"}]},
            "operations": [{"op": "gpio_set", "led": "status", "active": True}],
        }
    )
    result = run_plan(plan)
    assert result.status.value == "pass", [e.message for e in result.evidence]
    main = lower(plan, load_target("esp32s3"), "espidf").files["main/main.c"]
    assert main.index("gpio_set_level(GPIO_NUM_2, 1U)") < main.index("gpio_config(&gpio_set_0_io)")


def test_unknown_led_is_evidence_not_a_lowering_error() -> None:
    evidence = check(_example("native_sim"), load_target("native_sim"), "zephyr")
    assert [e.code for e in evidence] == ["E_UNKNOWN_RESOURCE"] and evidence[0].location == "operations[0].led"


def test_bare_metal_runs_in_qemu(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    result = run_plan(EXAMPLE, target="stm32f407", framework="baremetal", out_dir=tmp_path, build="gcc", run="qemu")
    assert result.status.value == "pass", [e.message for e in result.evidence]
    console = str(result.run["output"]) if result.run is not None else ""
    assert "rac: status_on ok pin=PD13 level=1" in console and "rac: status_off ok pin=PD12 level=0" in console
