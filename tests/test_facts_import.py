"""The importers: committed svd.json / pins.json match what the importers derive from ../shared.

The cross-checks read the vendor XML with ElementTree directly (not through cmsis-svd or the pin
importer), so a bug in an importer cannot hide itself.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rac_fw.domains.firmware.facts.load import targets_root
from rac_fw.domains.firmware.facts.pin_import import (
    PinImportError,
    dumps_board_pins,
    dumps_pins,
    import_board_pins,
    import_pins,
)
from rac_fw.domains.firmware.facts.svd_import import (
    SvdImportError,
    dumps_facts,
    svd_from_pack,
    svd_from_path,
    svd_from_pyocd,
)

SVD_CHIPS = ("stm32f407", "stm32h743", "nrf52840", "esp32s3")
PIN_INPUTS = {
    "stm32f407": ("STM32F407VGTx.xml", "GPIO-STM32F417_gpio_v1_0_Modes.xml",
                  "C47_Discovery_STM32F407G-DISC1_STM32F407VG_Board_AllConfig.ioc"),
    "stm32h743": ("STM32H743ZITx.xml", "GPIO-STM32H747_gpio_v1_0_Modes.xml",
                  "G73_Nucleo_NUCLEO-H743ZI2_STM32H743ZIT_Board_AllConfig.ioc"),
}


def _committed(target_id: str, name: str) -> Path:
    """A committed importer output: chip files in the chip pack, ``board_pins.json`` in the board pack."""
    pack = "boards" if name == "board_pins.json" else "chips"
    return targets_root() / pack / target_id / name


def _int(text: str) -> int:
    return int(text.strip(), 0)


def test_svd_import_is_deterministic_and_matches_committed(shared_dir: Path):
    derived = dumps_facts(svd_from_path(shared_dir / "svd" / "stm32f407.svd"))
    assert derived == _committed("stm32f407", "svd.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("chip", SVD_CHIPS)
def test_svd_json_base_addresses_and_irqs_match_the_svd_xml(shared_dir: Path, chip: str):
    root = ET.parse(shared_dir / "svd" / f"{chip}.svd").getroot()
    facts = json.loads(_committed(chip, "svd.json").read_text(encoding="utf-8"))
    xml_irqs: set[int] = set()
    checked = 0
    for element in root.iter("peripheral"):
        name = element.findtext("name")
        base = element.findtext("baseAddress")
        if name is None or base is None:
            continue
        assert facts["peripherals"][name]["base"] == _int(base), name
        checked += 1
        for irq in element.iter("interrupt"):
            xml_irqs.add(_int(irq.findtext("value") or "-1"))
    assert checked == len(facts["peripherals"])
    assert {row[0] for row in facts["interrupts"]} == xml_irqs
    assert len(_committed(chip, "svd.json").read_bytes()) < 1_000_000


@pytest.mark.parametrize("target_id", sorted(PIN_INPUTS))
def test_pins_json_matches_importer_and_st_xml(shared_dir: Path, target_id: str):
    mcu, modes, board = PIN_INPUTS[target_id]
    base = shared_dir / "stm32_pin_data"
    derived = import_pins(base / "mcu" / mcu, base / "mcu" / "IP" / modes)
    assert dumps_pins(derived) == _committed(target_id, "pins.json").read_text(encoding="utf-8")
    wiring = import_board_pins(base / "boards" / board, derived)
    assert dumps_board_pins(wiring) == _committed(target_id, "board_pins.json").read_text(encoding="utf-8")
    assert set(wiring["reserved"]) == {"PC14", "PC15", "PH0", "PH1"}  # the board's crystal pins
    # Independent cross-check of PA9 / USART1_TX against ST's GPIO modes XML.
    root = ET.parse(base / "mcu" / "IP" / modes).getroot()
    values = [
        value.text
        for gpio_pin in root.iter("{http://dummy.com}GPIO_Pin")
        if (gpio_pin.get("Name") or "").split(" ")[0] == "PA9"
        for signal in gpio_pin.iter("{http://dummy.com}PinSignal")
        if signal.get("Name") == "USART1_TX"
        for value in signal.iter("{http://dummy.com}PossibleValue")
    ]
    assert values == ["GPIO_AF7_USART1"]
    committed = json.loads(_committed(target_id, "pins.json").read_text(encoding="utf-8"))
    assert ["USART1_TX", 7] in committed["pins"]["PA9"]["functions"]
    assert "ADC1_IN9" in committed["pins"]["PB1"].get("analog", []) or target_id == "stm32h743"


def test_importers_reject_bad_input_with_located_errors(tmp_path: Path):
    bogus = tmp_path / "bogus.svd"
    bogus.write_text("<device><peripherals>", encoding="utf-8")
    with pytest.raises(SvdImportError, match="bogus.svd"):
        svd_from_path(bogus)
    with pytest.raises(SvdImportError, match="not found"):
        svd_from_path(tmp_path / "missing.svd")
    not_st = tmp_path / "not_st.xml"
    not_st.write_text("<Other/>", encoding="utf-8")
    with pytest.raises(PinImportError, match="not_st.xml"):
        import_pins(not_st, not_st)


def test_pyocd_bundled_svd_gives_the_same_facts():
    from_pyocd = svd_from_pyocd("nrf52840")
    committed = json.loads(_committed("nrf52840", "svd.json").read_text(encoding="utf-8"))
    assert from_pyocd["source"].startswith("pyocd:")
    assert {k: v for k, v in from_pyocd.items() if k != "source"} == {
        k: v for k, v in committed.items() if k != "source"
    }


def test_pack_device_not_cached_names_the_install_step(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # an empty cmsis-pack-manager cache
    with pytest.raises(SvdImportError, match="pyocd pack install STM32F407VGTx"):
        svd_from_pack("STM32F407VGTx")
