"""Typed facts: chip tables are typed ``Target`` fields, so nothing reads ``Target.extra`` by string except
the two keys whose owners type them next (``flash``: storage, ``radio``: net), and every pack file is
parsed strictly (an unknown key anywhere is a located ``TargetFileError``)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from rac_fw.domains.firmware.facts.load import TargetFileError, load_pack, load_target, target_ids, targets_root

ROOT = Path(__file__).resolve().parents[1] / "rac_fw"
#: The untyped keys left in ``Target.extra`` until their owners' typed facts land.
EXTRA_KEYS = {"flash", "radio", "network"}  # typed by their own modules (facts/storage, radio, network)
#: Where the accessor itself lives (``facts.query.chip_table``) and the observation that lists every fact.
ACCESSORS = {ROOT / "domains/firmware/facts/query.py", ROOT / "domains/firmware/facts/observe.py"}


def _extra_reads() -> list[tuple[str, int, str]]:
    """Every read of ``X.extra`` or ``chip_table(target, KEY)`` in the package, with the key it reads
    (``?`` when the key is not a string constant)."""
    found: list[tuple[str, int, str]] = []
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            key = None
            if isinstance(node, ast.Attribute) and node.attr == "extra" and isinstance(node.ctx, ast.Load):
                parent = parents.get(id(node))
                key = "?"
                if isinstance(parent, ast.Subscript) and isinstance(parent.slice, ast.Constant):
                    key = str(parent.slice.value)
                elif isinstance(parent, ast.Attribute) and parent.attr == "get":
                    call = parents.get(id(parent))
                    if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
                        key = str(call.args[0].value)
            elif isinstance(node, ast.Call) and "chip_table" in {getattr(node.func, a, "") for a in ("id", "attr")}:
                arg = node.args[-1] if node.args else None
                key = str(arg.value) if isinstance(arg, ast.Constant) else "?"
            if key is not None:
                found.append((str(path.relative_to(ROOT.parent)), node.lineno, key))
    return found


def test_no_code_reads_extra_for_an_untyped_key() -> None:
    reads = _extra_reads()
    outside = [(f, n, k) for f, n, k in reads if k not in EXTRA_KEYS and ROOT.parent / f not in ACCESSORS]
    assert not outside, f"typed facts exist for these (facts/chip.py, Target fields): {outside}"
    assert len([r for r in reads if r[2] in EXTRA_KEYS]) >= 3  # the flash/radio readers are still found


def test_extra_holds_only_the_family_tables_on_every_target() -> None:
    for target_id in target_ids():
        assert set(load_target(target_id).extra) <= EXTRA_KEYS, target_id


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
