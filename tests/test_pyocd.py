"""The pyOCD flasher: the target-matching rule over pyOCD's own names, and real pyOCD with no probe."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from pyocd.board.board_ids import BOARD_ID_TO_INFO
from pyocd.target import TARGET

from rac_fw.domains.firmware.backends import Capability, FlashRequest, get_backend
from rac_fw.domains.firmware.backends.pyocd import (
    chip_id_matches,
    image_regions,
    installed_pack_parts,
    pyocd_spec,
    pyocd_specs,
    resolve_pyocd_target,
    target_matches,
)
from tests.conftest import require_tool


@pytest.mark.parametrize(
    ("plan_target", "pyocd_name", "expected"),
    [
        ("nrf52840", "nrf52840", True),
        ("nrf52840", "nRF52840_xxAA", True),
        ("nrf52840", "nrf52833", False),
        ("nrf52840", "nrf52", False),
        ("stm32h743", "stm32h743xx", True),
        ("stm32h743", "stm32h743zitx", True),
        ("stm32h743", "STM32H743ZITx", True),
        ("stm32h743", "stm32h750xx", False),
        ("stm32h743", "stm32h7", False),
        ("stm32f407", "stm32f407vgtx", True),
        ("stm32f407", "STM32F407VG", True),
        ("stm32f407", "stm32f405rgtx", False),
        ("stm32f407", "stm32f429zitx", False),
        ("esp32s3", "esp32s3", False),
        ("native_sim", "nrf52840", False),
    ],
)
def test_target_matching_rule(plan_target: str, pyocd_name: str, expected: bool) -> None:
    assert target_matches(plan_target, pyocd_name) is expected


def test_builtin_names_are_real_pyocd_targets() -> None:
    for plan_target, spec in pyocd_specs().items():
        if spec.builtin is not None:
            assert spec.builtin in TARGET, f"{spec.builtin} is not a pyOCD built-in target"
            assert target_matches(plan_target, spec.builtin)
    assert "stm32f407" not in {name[:9] for name in TARGET}, "pyOCD gained an F407 target: use it"


def test_probe_board_records_match_only_their_own_target() -> None:
    """pyOCD's board table (what a probe reports) against every plan target."""
    records = {info.name: info.target for info in BOARD_ID_TO_INFO.values()}
    expected = {"NUCLEO-H743ZI": "stm32h743", "DISCO-F407VG": "stm32f407", "nRF52840-DK": "nrf52840"}
    for board, plan_target in expected.items():
        for other in pyocd_specs():
            assert target_matches(other, records[board]) is (other == plan_target), (board, other)


def test_pyocd_names_and_chip_ids_are_pack_facts() -> None:
    """What the flasher knows about each chip comes from the fact pack (board + extra.debug)."""
    from rac_fw.domains.firmware.facts.load import load_target

    assert set(pyocd_specs()) == {"nrf52840", "stm32h743", "stm32f407"}
    for plan_target, spec in pyocd_specs().items():
        target = load_target(plan_target)
        assert target.debug is not None
        chip = target.debug.chip_id
        assert (spec.chip_id.address, spec.chip_id.value, spec.chip_id.mask) == (
            chip.address,
            chip.value,
            chip.mask,
        )
        assert target.board.pyocd_target in (spec.builtin, spec.pack_target)
    f407 = pyocd_spec("stm32f407")
    assert f407 is not None and f407.builtin is None and f407.pack == "Keil.STM32F4xx_DFP"
    assert pyocd_spec("esp32s3") is None and pyocd_spec("native_sim") is None and pyocd_spec("nope") is None
    assert not get_backend("pyocd").supports(Capability.FLASH, "zephyr", "esp32s3")
    assert get_backend("pyocd").supports(Capability.FLASH, "zephyr", "stm32f407")


def test_chip_id_rule() -> None:
    assert chip_id_matches("stm32f407", 0x10076413)  # rev Y, DEV_ID 0x413
    assert not chip_id_matches("stm32f407", 0x10076419)  # F42x/F43x
    assert chip_id_matches("stm32h743", 0x20036450)
    assert chip_id_matches("nrf52840", 0x52840)
    assert not chip_id_matches("nrf52840", 0x52833)


def test_stm32f407_names_the_pack_or_uses_the_cached_one() -> None:
    name, problem = resolve_pyocd_target("stm32f407")
    cached = [p for p in installed_pack_parts() if target_matches("stm32f407", p)]
    if cached:
        assert problem is None and name is not None and target_matches("stm32f407", name)
    else:
        assert name is None and problem is not None
        assert problem.code == "E_TOOL_MISSING"
        assert "`pyocd pack install stm32f407vg`" in problem.message
        assert "Keil.STM32F4xx_DFP" in problem.message


def test_explicit_pack_file_is_honoured(tmp_path: Path) -> None:
    name, problem = resolve_pyocd_target("stm32f407", tmp_path / "Keil.STM32F4xx_DFP.2.17.1.pack")
    assert problem is None and name == "stm32f407vgtx"
    assert target_matches("stm32f407", name)


def test_no_probe_attached_fails_fast_and_clearly(tmp_path: Path) -> None:
    backend = get_backend("pyocd")
    if backend.probes():  # type: ignore[attr-defined]
        pytest.skip("a debug probe is attached to this machine")
    started = time.monotonic()
    result = backend.flash(FlashRequest(image=tmp_path / "app.elf", target="stm32h743"))
    assert time.monotonic() - started < 10
    assert not result.ok
    assert result.evidence[0].code == "E_PROBE_NOT_FOUND"
    assert "no debug probe is connected" in result.evidence[0].message
    with_uid = backend.flash(FlashRequest(image=tmp_path / "app.elf", target="nrf52840", probe="000683"))
    assert "with UID '000683'" in with_uid.evidence[0].message


def test_unknown_erase_policy_and_unsupported_target_are_refused(tmp_path: Path) -> None:
    backend = get_backend("pyocd")
    bad = backend.flash(FlashRequest(image=tmp_path / "a.elf", target="stm32h743", erase="everything"))
    assert bad.evidence[0].code == "E_INPUT"
    esp = backend.flash(FlashRequest(image=tmp_path / "a.elf", target="esp32s3"))
    assert esp.evidence[0].code == "E_BACKEND_UNSUPPORTED"


def test_image_regions_are_the_flash_bytes_of_a_real_elf(tmp_path: Path) -> None:
    """Read-back verification compares exactly what objcopy would put in flash."""
    gcc = require_tool("arm-none-eabi-gcc")
    source = tmp_path / "app.c"
    source.write_text(
        "const unsigned char table[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
        "int counter = 42;\n"
        "void _start(void) { for (;;) { counter += table[counter & 7]; } }\n"
    )
    elf = tmp_path / "app.elf"
    subprocess.run(
        [
            gcc,
            "-mcpu=cortex-m4",
            "-mthumb",
            "-O1",
            "-nostdlib",
            "-Wl,-Ttext=0x08000000",
            "-Wl,-Tdata=0x20000000",
            "-o",
            str(elf),
            str(source),
        ],
        check=True,
    )
    regions = image_regions(elf)
    assert regions, "an ELF with code has loadable bytes"
    flash_regions = [(a, d) for a, d in regions if 0x08000000 <= a < 0x08100000]
    assert flash_regions and flash_regions[0][0] == 0x08000000
    blob = tmp_path / "app.bin"
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".text", str(elf), str(blob)], check=True)
    text = blob.read_bytes()
    assert flash_regions[0][1][: len(text)] == text
