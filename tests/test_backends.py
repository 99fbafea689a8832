"""Builders and flashers: the registry, builder selection, generated project files and command lines,
and missing-tool evidence measured for real. west, PlatformIO, ESP-IDF and esptool are absent on the
project's machines; the ``bare_host`` fixture pins that absence (empty PATH, no SDK variables) so the
tests mean the same on a developer machine that has them."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import pytest
from conftest import require_tool
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.domains.firmware.backends import (
    BackendError,
    BuildRequest,
    Capability,
    FlashRequest,
    backends,
    build_artifact,
    get_backend,
    select_builder,
    select_runner,
)
from rac_fw.domains.firmware.backends.base import run_command
from rac_fw.domains.firmware.backends.esptool import esptool_command
from rac_fw.domains.firmware.backends.idf import idf_version
from rac_fw.domains.firmware.backends.platformio import pio_board, pio_boards, platformio_ini
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import Lowered, write_artifact

WORKSPACE_STEP = (
    "west workspace not found: run `pip install west && west init -m "
    "https://github.com/zephyrproject-rtos/zephyr --mr v4.1.0 ~/zephyrproject"
)


@pytest.fixture
def bare_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A host with no SDK tools on PATH and no SDK environment variables."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for var in ("ZEPHYR_BASE", "IDF_PATH", "ZEPHYR_SDK_INSTALL_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PLATFORMIO_CORE_DIR", str(tmp_path / "pio-home"))
    return tmp_path


def zephyr_artifact(root: Path, target: str = "native_sim") -> Path:
    files = {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.20.0)\n"
        "find_package(Zephyr REQUIRED HINTS $ENV{ZEPHYR_BASE})\nproject(app)\n"
        "target_sources(app PRIVATE src/main.c)\n",
        "prj.conf": "CONFIG_PRINTK=y\n",
        "src/main.c": '#include <zephyr/kernel.h>\nint main(void) { printk("hello\\n"); return 0; }\n',
    }
    out = root / "artifact"
    write_artifact(Lowered(framework="zephyr", target=target, files=files), out)
    return out


def test_registry_declares_names_and_capabilities() -> None:
    registry = backends()
    for name in ("west", "platformio", "idf", "pyocd", "esptool", "serial"):
        assert name in registry
    assert registry["west"].capabilities == {Capability.BUILD}
    assert registry["west"].frameworks == {"zephyr"}
    assert Capability.FLASH in registry["pyocd"].capabilities
    # esptool drives the targets whose board names an ESP-IDF chip (facts, not a list in the backend).
    assert registry["esptool"]().supports(Capability.FLASH, None, "esp32s3")
    assert not registry["esptool"]().supports(Capability.FLASH, None, "stm32f407")
    assert registry["serial"].capabilities == {Capability.RUN}
    with pytest.raises(BackendError) as err:
        get_backend("jlink")
    assert err.value.evidence[0].code == "E_UNKNOWN_BACKEND"
    assert "west" in err.value.evidence[0].message


def test_named_builder_is_returned_and_missing_says_how_to_get_a_workspace(bare_host: Path) -> None:
    west = select_builder("west", "zephyr")
    assert west.name == "west"
    messages = [e.message for e in west.missing()]
    assert "west not found: run `pip install west`" in messages
    assert any(m.startswith(WORKSPACE_STEP) and "west zephyr-export" in m for m in messages)
    assert all(e.code == "E_TOOL_MISSING" for e in west.missing())


def test_builder_for_the_wrong_framework_is_refused() -> None:
    with pytest.raises(BackendError) as err:
        select_builder("west", "espidf")
    evidence = err.value.evidence[0]
    assert evidence.code == "E_BACKEND_UNSUPPORTED"
    assert "cannot build framework 'espidf'" in evidence.message and "idf" in evidence.message
    with pytest.raises(BackendError):
        select_builder("platformio", "baremetal")


def test_auto_without_any_present_builder_lists_every_install_step(bare_host: Path) -> None:
    with pytest.raises(BackendError) as err:
        select_builder("auto", "zephyr", "nrf52840")
    messages = " | ".join(e.message for e in err.value.evidence)
    assert "pip install west" in messages and "pip install platformio" in messages
    assert {e.code for e in err.value.evidence} == {"E_TOOL_MISSING"}


def test_auto_picks_the_first_present_builder() -> None:
    require_tool("arm-none-eabi-gcc")
    assert "gcc" in backends() and get_backend("gcc").available()
    assert select_builder("auto", "baremetal", "stm32f407").name == "gcc"


def test_west_command_line_and_board_from_facts(tmp_path: Path) -> None:
    west = get_backend("west")
    request = BuildRequest(tmp_path / "app", "stm32f407", "zephyr", tmp_path / "build")
    board = west.board_for(request)  # type: ignore[attr-defined]
    assert board == "stm32f4_disco"
    assert west.command(request, board) == [  # type: ignore[attr-defined]
        "west",
        "build",
        "-b",
        "stm32f4_disco",
        "-d",
        str(tmp_path / "build"),
        "--pristine=auto",
        str(tmp_path / "app"),
    ]
    ci = BuildRequest(tmp_path / "app", "native_sim", "zephyr", tmp_path / "build", board="native_sim/native/64")
    assert west.board_for(ci) == "native_sim/native/64"  # type: ignore[attr-defined]


def test_west_build_without_workspace_fails_at_once_with_the_steps(bare_host: Path) -> None:
    artifact = zephyr_artifact(bare_host)
    started = time.monotonic()
    result = build_artifact(artifact, "west", board="native_sim/native/64")
    assert time.monotonic() - started < 5
    assert not result.ok and result.image is None
    assert result.command[:4] == ["west", "build", "-b", "native_sim/native/64"]
    assert any(e.message.startswith(WORKSPACE_STEP) for e in result.evidence)


def test_west_finds_a_workspace_through_zephyr_base(bare_host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = bare_host / "zephyrproject" / "zephyr"
    base.mkdir(parents=True)
    (base / "VERSION").write_text("VERSION_MAJOR = 4\nVERSION_MINOR = 1\nPATCHLEVEL = 0\nVERSION_TWEAK = 0\n")
    monkeypatch.setenv("ZEPHYR_BASE", str(base))
    rows = {r.name: r for r in get_backend("west").requirements()}
    assert rows["west workspace"].present and rows["west workspace"].version == "Zephyr 4.1.0"
    assert not rows["west"].present
    # An ARM board additionally needs the Zephyr SDK; native_sim does not.
    arm = [e.message for e in get_backend("west").missing_for("zephyr", "stm32f407")]
    host = [e.message for e in get_backend("west").missing_for("zephyr", "native_sim")]
    assert any("Zephyr SDK not found: run `cd ~/zephyrproject/zephyr && west sdk install`" in m for m in arm)
    assert not any("Zephyr SDK" in m for m in host)


@pytest.mark.parametrize(
    ("target", "framework", "lines"),
    [
        (
            "nrf52840",
            "zephyr",
            ["platform = nordicnrf52", "board = nrf52840_dk", "framework = zephyr", "src_dir = zephyr/src"],
        ),
        (
            "stm32h743",
            "hal",
            [
                "platform = ststm32",
                "board = nucleo_h743zi",
                "framework = stm32cube",
                "src_dir = Src",
                "include_dir = Inc",
                "board_build.stm32cube.custom_config_header = yes",
            ],
        ),
        ("stm32f407", "zephyr", ["platform = ststm32", "board = disco_f407vg", "framework = zephyr"]),
        (
            "esp32s3",
            "espidf",
            ["platform = espressif32", "board = esp32-s3-devkitc-1", "framework = espidf", "src_dir = main"],
        ),
    ],
)
def test_platformio_ini(target: str, framework: str, lines: list[str]) -> None:
    files = {"Src/main.c", "Inc/stm32h7xx_hal_conf.h"} if framework == "hal" else {"src/main.c"}
    ini = platformio_ini(target, framework, files, 115200)
    for line in lines:
        assert line in ini.splitlines()
    assert f"[env:{target}]" in ini and "monitor_speed = 115200" in ini
    assert get_backend("platformio").supports(Capability.BUILD, framework, target)


def test_platformio_refuses_what_it_has_no_board_for() -> None:
    pio = get_backend("platformio")
    assert not pio.supports(Capability.BUILD, "espidf", "stm32h743")
    assert not pio.supports(Capability.BUILD, "zephyr", "native_sim")
    assert set(pio_boards()) == {"nrf52840", "stm32h743", "stm32f407", "esp32s3"}
    with pytest.raises(ValueError, match="no hal board"):
        platformio_ini("esp32s3", "hal", set(), None)


def test_platformio_boards_are_pack_facts() -> None:
    """The backend's board table is read from each pack's board facts, not kept in the backend."""
    for target_id, pio in pio_boards().items():
        board = load_target(target_id).board
        assert (pio.platform, pio.board) == (board.platformio_platform, board.platformio_board)
        assert set(pio.frameworks) == set(board.platformio_frameworks) <= set(load_target(target_id).frameworks)
    assert pio_board("native_sim") is None and pio_board("no_such_target") is None
    nrf = pio_board("nrf52840")
    assert nrf is not None and nrf.frameworks == {"zephyr": "zephyr"}


def test_platformio_build_lays_out_the_project_and_fails_at_once_without_pio(bare_host: Path) -> None:
    artifact = zephyr_artifact(bare_host, "nrf52840")
    started = time.monotonic()
    result = build_artifact(artifact, "platformio")
    assert time.monotonic() - started < 5, "must not wait for PlatformIO's network timeout"
    assert not result.ok
    messages = [e.message for e in result.evidence]
    assert "pio not found: run `pip install platformio`" in messages
    assert any("pio pkg install -g --platform nordicnrf52" in m for m in messages)
    project = artifact / "build" / "project"
    assert (project / "zephyr" / "CMakeLists.txt").is_file()
    assert (project / "zephyr" / "src" / "main.c").is_file()
    assert not (project / "zephyr" / "build").exists(), "the build dir must not be copied into itself"
    assert "board = nrf52840_dk" in (project / "platformio.ini").read_text()
    assert result.command == ["pio", "run", "-d", str(project), "-e", "nrf52840"]


def test_platformio_platform_is_detected_from_its_manifest(bare_host: Path) -> None:
    manifest = bare_host / "pio-home" / "platforms" / "ststm32" / "platform.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"name": "ststm32", "version": "19.1.0"}))
    rows = {r.name: r for r in get_backend("platformio").details()}
    assert rows["PlatformIO platform ststm32"].present
    assert rows["PlatformIO platform ststm32"].version == "19.1.0"
    assert not rows["PlatformIO platform nordicnrf52"].present


def test_idf_commands_and_missing_evidence(bare_host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    idf = get_backend("idf")
    request = BuildRequest(bare_host / "src", "esp32s3", "espidf", bare_host / "build")
    base = ["idf.py", "-C", str(bare_host / "src"), "-B", str(bare_host / "build")]
    assert idf.commands(request, "esp32s3") == [[*base, "set-target", "esp32s3"], [*base, "build"]]  # type: ignore[attr-defined]
    messages = [e.message for e in idf.missing()]
    assert any(m.startswith("ESP-IDF (IDF_PATH) not found: run `git clone -b v5.5 --recursive") for m in messages)
    monkeypatch.setenv("IDF_PATH", str(bare_host))
    assert any(f"not an ESP-IDF checkout at {bare_host}" in e.message for e in idf.missing())
    result = idf.build(request)
    assert not result.ok and result.evidence[0].code == "E_TOOL_MISSING"


def test_idf_version_is_read_from_the_checkout(tmp_path: Path) -> None:
    cmake = tmp_path / "tools" / "cmake" / "version.cmake"
    cmake.parent.mkdir(parents=True)
    cmake.write_text("set(IDF_VERSION_MAJOR 5)\nset(IDF_VERSION_MINOR 4)\nset(IDF_VERSION_PATCH 1)\n")
    assert idf_version(tmp_path) == "5.4.1"


def flasher_args(build: Path, chip: str = "esp32s3") -> Path:
    build.mkdir(parents=True, exist_ok=True)
    spec = {
        "write_flash_args": ["--flash_mode", "dio", "--flash_size", "2MB", "--flash_freq", "80m"],
        "flash_files": {"0x10000": "app.bin", "0x0": "bootloader/bootloader.bin", "0x8000": "pt/pt.bin"},
        "extra_esptool_args": {"after": "hard_reset", "before": "default_reset", "stub": True, "chip": chip},
    }
    for rel in spec["flash_files"].values():
        (build / rel).parent.mkdir(parents=True, exist_ok=True)
        (build / rel).write_bytes(b"\xff" * 256)
    path = build / "flasher_args.json"
    path.write_text(json.dumps(spec))
    return path


def test_esptool_command_follows_the_build_flasher_args(tmp_path: Path) -> None:
    args = flasher_args(tmp_path / "build")
    command = esptool_command(args, "esp32s3", "/dev/ttyACM0", 460800, "chip")
    assert command[:3] == [sys.executable, "-m", "esptool"]
    assert command[3:9] == ["--chip", "esp32s3", "-p", "/dev/ttyACM0", "-b", "460800"]
    tail = command[command.index("write_flash") :]
    assert tail[1:7] == ["--flash_mode", "dio", "--flash_size", "2MB", "--flash_freq", "80m"]
    assert "--erase-all" in tail
    offsets = [tail[i] for i in range(len(tail)) if tail[i].startswith("0x")]
    assert offsets == ["0x0", "0x8000", "0x10000"], "images are written in address order"
    assert str(tmp_path / "build" / "app.bin") in tail


def test_esptool_refuses_an_image_built_for_another_chip(tmp_path: Path) -> None:
    args = flasher_args(tmp_path / "build", chip="esp32")
    result = get_backend("esptool").flash(
        FlashRequest(image=args.parent / "app.elf", target="esp32s3", port="/dev/ttyACM0")
    )
    assert not result.ok
    if importlib.util.find_spec("esptool") is None:
        assert result.evidence[0].message == "esptool not found: run `pip install esptool`"
    else:
        assert result.evidence[0].code == "E_TARGET_MISMATCH"
        assert "built for chip 'esp32'" in result.evidence[0].message


def test_esptool_against_a_silent_port(tmp_path: Path) -> None:
    """A port with no ESP32 behind it (a pty): clear evidence, bounded, nothing written."""
    args = flasher_args(tmp_path / "build")
    master, slave = os.openpty()
    try:
        started = time.monotonic()
        result = get_backend("esptool").flash(
            FlashRequest(image=args.parent / "app.elf", target="esp32s3", port=os.ttyname(slave), timeout_s=60)
        )
        assert time.monotonic() - started < 60
    finally:
        os.close(master)
        os.close(slave)
    assert not result.ok and not result.verified
    if importlib.util.find_spec("esptool") is None:
        assert result.evidence[0].code == "E_TOOL_MISSING"
    else:
        assert result.evidence[0].code == "E_BOARD_NOT_RESPONDING"
        assert "hold BOOT while pressing RESET" in result.evidence[0].message


def test_run_command_is_bounded_and_logged(tmp_path: Path) -> None:
    started = time.monotonic()
    outcome = run_command(
        [sys.executable, "-c", "print('working', flush=True); import time; time.sleep(30)"],
        tmp_path / "slow.log",
        timeout_s=1.0,
    )
    assert time.monotonic() - started < 5
    assert outcome.returncode is None and not outcome.ok
    evidence = outcome.evidence("west", "build")
    assert evidence.code == "E_BUILD_FAILED" and "timed out after 1 s" in evidence.message
    assert "working" in outcome.tail
    missing = run_command(["/nonexistent/tool"], tmp_path / "none.log", timeout_s=5)
    assert missing.returncode == 127 and "cannot start" in missing.tail


def test_build_cli_without_workspace_says_how_to_get_one(bare_host: Path) -> None:
    artifact = zephyr_artifact(bare_host)
    result = CliRunner().invoke(app, ["build", str(artifact), "--builder", "west", "--board", "native_sim/native/64"])
    assert result.exit_code == 1
    assert "west workspace not found: run `pip install west && west init" in result.output.replace("\n", " ")
    as_json = CliRunner().invoke(app, ["build", str(artifact), "--builder", "west", "--json"])
    payload = json.loads(as_json.stdout)
    assert payload["status"] == "fail" and payload["backend"] == "west"
    assert any(e["code"] == "E_TOOL_MISSING" for e in payload["evidence"])
    auto = CliRunner().invoke(app, ["build", str(artifact), "--json"])
    assert auto.exit_code == 1, "no builder installed is a failure of this machine, not invalid input"
    assert json.loads(auto.stdout)["status"] == "fail"


def test_build_cli_rejects_a_directory_that_is_no_artifact(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["build", str(tmp_path)])
    assert result.exit_code == 2
    assert "is not a generated artifact" in result.output


def test_run_specs_resolve_to_runners(tmp_path: Path) -> None:
    assert select_runner("serial").name == "serial"
    with pytest.raises(BackendError) as err:
        select_runner("pyocd")
    assert "cannot run an image" in err.value.evidence[0].message
    with pytest.raises(BackendError) as board:  # bench boards are the bench layer's (test_hil)
        select_runner("board:disco")
    assert board.value.evidence[0].code == "E_BACKEND_UNSUPPORTED"
