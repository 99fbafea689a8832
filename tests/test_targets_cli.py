"""``rac-fw targets`` through the real CLI app: JSON observation, details, importers, error exits."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.domains.firmware.facts.load import targets_root

runner = CliRunner()


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_list_names_all_packs():
    ids = {row["id"] for row in _json(["targets", "list", "--json"])["targets"]}
    assert {"nrf52840", "stm32h743", "stm32f407", "esp32s3", "native_sim"} <= ids


def test_show_stm32h743_json_dtcm_unreachable_by_dma1_axi_cacheable():
    data = _json(["targets", "show", "stm32h743", "--json"])
    regions = {region["name"]: region for region in data["memory"]}
    assert "DMA1" not in regions["DTCM"]["dma"] and "DMA1" in regions["DTCM"]["no_dma"]
    assert regions["AXI_SRAM"]["cacheable"] is True and "DMA1" in regions["AXI_SRAM"]["dma"]


def test_show_human_tables_render():
    result = runner.invoke(app, ["targets", "show", "nrf52840"])
    assert result.exit_code == 0 and "EasyDMA" in result.output and "P0.13" in result.output


def test_detail_pin_and_peripheral():
    pin = _json(["targets", "show", "stm32f407", "--detail", "pin", "PA9", "--json"])
    assert {"signal": "USART1_TX", "af": 7} in pin["functions"]
    usart = _json(["targets", "show", "stm32f407", "--detail", "peripheral", "USART2", "--json"])
    assert usart["base"] == "0x40004400" and usart["clock"] == "APB1"


def test_unknown_target_and_pin_exit_2_with_near_matches():
    result = runner.invoke(app, ["targets", "show", "stm32f40"])
    assert result.exit_code == 2 and "stm32f407" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["targets", "show", "stm32f407", "--detail", "pin", "PA19"])
    assert result.exit_code == 2 and "E_UNKNOWN_PIN" in result.output and "PA1" in result.output


def test_import_pins_check_and_svd_errors(shared_dir: Path, tmp_path: Path):
    base = shared_dir / "stm32_pin_data"
    args = [
        "targets", "import-pins", "stm32f407",
        "--mcu", str(base / "mcu" / "STM32F407VGTx.xml"),
        "--gpio-modes", str(base / "mcu" / "IP" / "GPIO-STM32F417_gpio_v1_0_Modes.xml"),
        "--board", str(base / "boards" / "C47_Discovery_STM32F407G-DISC1_STM32F407VG_Board_AllConfig.ioc"),
    ]
    result = runner.invoke(app, [*args, "--check"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "pins.json"
    result = runner.invoke(app, [*args, "--output", str(out)])
    assert result.exit_code == 0
    assert out.read_text() == (targets_root() / "chips" / "stm32f407" / "pins.json").read_text()
    board_pins = targets_root() / "boards" / "stm32f407" / "board_pins.json"
    assert (tmp_path / "board_pins.json").read_text() == board_pins.read_text()
    # `native` is a chip id and no target id: a board configuration has no board pack to go to.
    result = runner.invoke(app, ["targets", "import-pins", "native", *args[3:]])
    assert result.exit_code == 2 and "E_USAGE" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["targets", "import", "stm32f407", "--svd", str(tmp_path / "none.svd")])
    assert result.exit_code == 2 and "E_SVD_IMPORT" in result.output
    result = runner.invoke(app, ["targets", "import", "nosuchchip", "--svd", str(tmp_path / "none.svd")])
    assert result.exit_code == 2 and "E_UNKNOWN_TARGET" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["targets", "import", "x"])
    assert result.exit_code == 2 and "exactly one" in result.output


def test_second_board_on_a_known_chip_lists_shows_and_lowers():
    """The nRF52840 Dongle is one file (targets/boards/nrf52840dongle/board.yaml) on the nrf52840 chip."""
    from rac_fw.contract import Status
    from rac_fw.domains.firmware.pipeline import run_plan
    from rac_fw.resources import data_dir

    assert sorted(p.name for p in (targets_root() / "boards" / "nrf52840dongle").iterdir()) == ["board.yaml"]
    rows = {row["id"]: row for row in _json(["targets", "list", "--json"])["targets"]}
    assert rows["nrf52840dongle"]["chip"] == rows["nrf52840"]["chip"] == "nrf52840"
    assert rows["nrf52840dongle"]["frameworks"] == ["zephyr"]
    shown = _json(["targets", "show", "nrf52840dongle", "--json"])
    assert shown["board"]["name"] == "nRF52840-Dongle" and "P0.06" in json.dumps(shown["board"]["leds"])
    assert shown["memory"] == _json(["targets", "show", "nrf52840", "--json"])["memory"]
    human = runner.invoke(app, ["targets", "list"], env={"COLUMNS": "200"})
    assert human.exit_code == 0 and "nrf52840dongle" in human.output
    result = run_plan(data_dir("examples") / "gpio_blink.yaml", target="nrf52840dongle")
    assert result.status is Status.PASS and result.framework == "zephyr", result.evidence
    assert result.lowered is not None
    overlay = result.lowered.files["boards/nrf52840dongle_nrf52840.overlay"]
    assert "DT_ALIAS(led0)" in result.lowered.files["src/main.c"] and overlay is not None
