"""Typed facts: every chip and board table is a typed ``Target`` field (the ``flash``/``radio``/``network``
family tables too: ``Target.extra`` is gone, nothing reads a fact by string key), and every pack file is
parsed strictly (an unknown key anywhere is a located ``TargetFileError``)."""

from __future__ import annotations

import ast
import shutil
from dataclasses import fields
from pathlib import Path

import pytest

from rac_fw.domains.firmware.facts.load import TargetFileError, load_pack, load_target, target_ids, targets_root
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.network import Network, interfaces
from rac_fw.domains.firmware.facts.radio import Radio, ble
from rac_fw.domains.firmware.facts.storage import FlashFacts, storage

ROOT = Path(__file__).resolve().parents[1] / "rac_fw"


def _extra_reads() -> list[tuple[str, int]]:
    """Every read of an attribute ``extra`` (the removed ``Target.extra``) or a call of the removed string-keyed
    accessor ``chip_table`` anywhere in the package."""
    found: list[tuple[str, int]] = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            read = isinstance(node, ast.Attribute) and node.attr == "extra" and isinstance(node.ctx, ast.Load)
            call = isinstance(node, ast.Call) and "chip_table" in {getattr(node.func, a, "") for a in ("id", "attr")}
            if read or call:
                found.append((str(path.relative_to(ROOT.parent)), node.lineno))
    return found


def test_no_code_reads_facts_by_string_key() -> None:
    assert "extra" not in {f.name for f in fields(Target)}
    assert _extra_reads() == []


def test_the_family_tables_are_typed_fields_on_every_target() -> None:
    for target_id in target_ids():
        target = load_target(target_id)
        assert target.flash is None or isinstance(target.flash, FlashFacts), target_id
        assert target.radio is None or isinstance(target.radio, Radio), target_id
        assert target.network is None or isinstance(target.network, Network), target_id
    esp, nrf, f4 = (load_target(t) for t in ("esp32s3", "nrf52840", "stm32f407"))
    found = storage(nrf)  # the board's partitions merged over the chip's geometry
    assert found is not None and found.flash.erase_blocks[0].size == 4096
    assert found.find("zephyr", "storage_partition") is not None
    assert f4.radio is None and ble(esp) is not None and ble(esp).stacks["espidf"].host == "nimble"  # type: ignore[union-attr]
    assert interfaces(esp, "espidf")[0].kind == "wifi" and interfaces(f4, "zephyr") == ()


def _packs(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(targets_root(), tmp_path / "targets")
    return tmp_path / "targets" / "boards", tmp_path / "targets" / "chips"


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("  instances:\n    USART1: {clock: APB2}", "  instancs:\n    USART1: {clock: APB2}",
         "chip.yaml:uart.instancs"),
        ("    USART1: {clock: APB2}", "    USART1: {clok: APB2}", "chip.yaml:uart.instances.USART1.clok"),
        ("  IWDG: {clock: LSI,", "  IWDG: {clock: LSI, reload_mx: 1,", "chip.yaml:watchdogs.IWDG.reload_mx"),
        ("kernel_ticks:\n  zephyr: {sys_clock_ticks_per_sec: 10000,",
         "kernel_ticks:\n  zephyr: {sys_clock_ticks: 10000,", "chip.yaml:kernel_ticks.zephyr"),
        ("extra:\n", "extra:\n  uart: {}\n", "chip.yaml:extra.uart"),
        ("    erased_value: 0xFF\n", "    erased_valu: 0xFF\n", "chip.yaml:extra.flash.erased_valu"),
        ("\nextra:\n", "\nflash: {}\nextra:\n", "chip.yaml:flash"),  # a family table lives under extra only
        ("timers:\n  TIM1: {bits: 16,", "timers:\n  TIM1: {bits: sixteen,", "chip.yaml:timers.TIM1.bits"),
    ],
)
def test_typed_chip_facts_parse_strictly(tmp_path: Path, old: str, new: str, where: str) -> None:
    boards, chips = _packs(tmp_path)
    chip = chips / "stm32f407" / "chip.yaml"
    text = chip.read_text(encoding="utf-8")
    assert old in text
    chip.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(TargetFileError) as info:
        load_pack(boards / "stm32f407")
    assert info.value.location.startswith(str(chip.parent)) and where in info.value.location, info.value.location


def test_typed_board_facts_parse_strictly(tmp_path: Path) -> None:
    boards, _ = _packs(tmp_path)
    board = boards / "stm32h743" / "board.yaml"
    text = board.read_text(encoding="utf-8")
    board.write_text(text.replace("  adc_default_pin: PA3", "  adc_default_pn: PA3", 1), encoding="utf-8")
    with pytest.raises(TargetFileError) as info:
        load_pack(boards / "stm32h743")
    assert info.value.location.endswith("boards/stm32h743/board.yaml:board.adc_default_pn")
    board.write_text(text.replace("    - {node: red_pwm_led,", "    - {nod: red_pwm_led,", 1), encoding="utf-8")
    with pytest.raises(TargetFileError) as info:
        load_pack(boards / "stm32h743")
    assert "boards/stm32h743/board.yaml:board.pwm_leds.0" in info.value.location


def test_board_family_tables_are_located_in_the_board_file(tmp_path: Path) -> None:
    """A board's ``extra.flash`` entry is merged over its chip's table; a bad key in it names the board file."""
    boards, _ = _packs(tmp_path)
    board = boards / "nrf52840" / "board.yaml"
    text = board.read_text(encoding="utf-8")
    old = "- {name: storage_partition, label: storage,"
    assert old in text
    board.write_text(text.replace(old, "- {name: storage_partition, labl: storage,", 1), encoding="utf-8")
    with pytest.raises(TargetFileError) as info:
        load_pack(boards / "nrf52840")
    assert info.value.location.endswith("boards/nrf52840/board.yaml:extra.flash.partitions.3.labl"), info.value.location


def test_a_key_given_twice_is_refused_with_its_line(tmp_path: Path) -> None:
    """YAML keeps the last of two equal keys silently: a second ``extra:`` (as a merge can leave) would drop
    every fact of the first. The loader refuses it, located at the repeated key."""
    boards, _ = _packs(tmp_path)
    board = boards / "esp32s3" / "board.yaml"
    text = board.read_text(encoding="utf-8")
    board.write_text(text + "\nextra:\n  flash: {}\n", encoding="utf-8")
    with pytest.raises(TargetFileError) as info:
        load_pack(boards / "esp32s3")
    assert "key extra is given twice" in str(info.value)
    assert info.value.location == f"{board}:{len(text.splitlines()) + 2}", info.value.location


def test_typed_facts_carry_the_values_the_packs_cite() -> None:
    f4, h7, nrf, esp = (load_target(t) for t in ("stm32f407", "stm32h743", "nrf52840", "esp32s3"))
    assert f4.uart is not None and f4.uart.instances["USART2"].clock == "APB1" and f4.uart.oversampling[0] == 16
    assert f4.qemu is not None and f4.qemu.serial_bases[1] == f4.peripherals["USART2"].base  # serial1 = USART2
    assert f4.pll is not None and f4.pll.vco_hz == (100_000_000, 432_000_000)
    assert h7.dmamux["DMAMUX1"].requests["USART3_RX"] == 45 and h7.cache_enabled["baremetal"] is False
    assert nrf.nvic is not None and nrf.nvic.kernel_levels["zephyr"].max_irq_priority == 6
    assert nrf.uart is not None and nrf.uart.baud_table[115200] == 115942
    assert esp.pwm is not None and esp.pwm.units["LEDC"].max_resolution_bits == 14
    assert esp.board.module is not None and esp.board.module.psram_mode == "octal"
    assert esp.watchdogs["TASK_WDT"].framework == "espidf" and esp.qemu is not None
