"""`rac-fw doctor` tells the truth about this machine: every row is checked against the machine itself."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil

import pytest
from conftest import IN_CI
from typer.testing import CliRunner

from rac_fw.cli import app


@pytest.fixture(scope="module")
def report() -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def tool(report: dict, name: str) -> dict:  # type: ignore[type-arg]
    return next(t for t in report["tools"] if t["name"] == name)


@pytest.mark.parametrize("name", ["arm-none-eabi-gcc", "qemu-system-arm", "west", "pio", "idf.py", "cmake"])
def test_tools_on_path_are_reported_as_they_are(report: dict, name: str) -> None:  # type: ignore[type-arg]
    row = tool(report, name)
    found = shutil.which(name)
    assert row["present"] is (found is not None)
    if found:
        assert row["location"] == found and row["version"]
    else:
        assert row["install"], "a missing tool names its install step"


def test_python_packages_are_reported_as_they_are(report: dict) -> None:  # type: ignore[type-arg]
    assert tool(report, "esptool")["present"] is (importlib.util.find_spec("esptool") is not None)
    pyocd = tool(report, "pyocd")
    assert pyocd["present"] is True
    import pyocd as pyocd_module

    assert pyocd["version"] == pyocd_module.__version__


def test_sdks_follow_the_environment(report: dict) -> None:  # type: ignore[type-arg]
    workspace = tool(report, "west workspace")
    zephyr_base = os.environ.get("ZEPHYR_BASE")
    if zephyr_base is None and shutil.which("west") is None:
        assert workspace["present"] is False
        assert "west init -m https://github.com/zephyrproject-rtos/zephyr" in workspace["install"]
    idf = tool(report, "ESP-IDF (IDF_PATH)")
    if "IDF_PATH" not in os.environ:
        assert idf["present"] is False


def test_pyocd_targets_and_pack(report: dict) -> None:  # type: ignore[type-arg]
    assert tool(report, "pyOCD target stm32h743")["present"] is True
    assert tool(report, "pyOCD target nrf52840")["present"] is True
    from rac_fw.domains.firmware.backends.pyocd import installed_pack_parts, target_matches

    has_pack = any(target_matches("stm32f407", p) for p in installed_pack_parts())
    f407 = tool(report, "pyOCD target stm32f407")
    assert f407["present"] is has_pack
    if not has_pack:
        assert f407["install"] == "pyocd pack install stm32f407vg"


def test_target_table_is_derived_from_the_backends(report: dict) -> None:  # type: ignore[type-arg]
    rows = {(r["target"], r["framework"]): r for r in report["targets"]}
    assert "pyocd" in rows[("stm32h743", "zephyr")]["flash"]
    for (target, framework), row in rows.items():
        if shutil.which("west") is None and "ZEPHYR_BASE" not in os.environ:
            assert "west" not in row["build"], (target, framework)
        if framework == "baremetal" and target == "stm32f407" and shutil.which("arm-none-eabi-gcc"):
            assert "gcc" in row["build"]
            if shutil.which("qemu-system-arm"):
                assert "qemu" in row["run"]


def test_probes_and_ports(report: dict) -> None:  # type: ignore[type-arg]
    from serial.tools import list_ports

    for port in list_ports.comports():
        assert port.device in report["ports"]
    assert isinstance(report["probes"], list)


def test_human_output_names_install_steps() -> None:
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0
    text = result.output
    assert "Toolchains, SDKs, emulators" in text and "What this machine enables per target" in text
    if shutil.which("west") is None and "ZEPHYR_BASE" not in os.environ:
        assert "west workspace not found: run `pip install west && west init" in text
    assert "Debug probes:" in text and "Serial ports:" in text
    if shutil.which("qemu-system-arm"):
        assert "✓ qemu-system-arm QEMU emulator version" in text


def test_json_has_its_documented_shape(report: dict) -> None:  # type: ignore[type-arg]
    assert report["schema"] == "rac-fw.doctor/1"
    assert {"tools", "bench", "manual_steps", "backends", "targets", "probes", "ports"} <= set(report)
    for row in report["tools"]:
        assert set(row) == {"name", "present", "install", "version", "location", "problem", "source"}
        assert row["source"] in ("pypi", "debian", "manual")
        assert (row["problem"] is None) is row["present"]


BENCH_PACKAGES = {
    "pyocd", "west", "platformio", "esptool", "cmsis-pack-manager", "pytest-embedded", "pytest-embedded-serial",
}


def test_bench_extra_is_reported_from_the_package_metadata(report: dict) -> None:  # type: ignore[type-arg]
    from importlib import metadata

    rows = {row["name"]: row for row in report["bench"]}
    assert set(rows) == BENCH_PACKAGES
    for name, row in rows.items():
        try:
            version: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = None
        assert row["present"] is (version is not None) and row["version"] == version
        if os.environ.get("CI") == "true":  # .ci/setup installs '.[dev,bench]'
            assert row["present"], f"{name} missing although CI installs the bench extra"
        if not row["present"]:
            assert row["install"] == "pip install 'rac-fw[bench]'"


def test_what_no_registry_provides_is_named_with_its_steps(report: dict) -> None:  # type: ignore[type-arg]
    steps = {s["name"]: s for s in report["manual_steps"]}
    if "ZEPHYR_BASE" not in os.environ:
        assert "west init -m https://github.com/zephyrproject-rtos/zephyr" in steps["west workspace"]["install"]
        assert steps["Zephyr SDK"]["install"].endswith("west sdk install")
    if "IDF_PATH" not in os.environ:
        assert "esp-idf/install.sh esp32s3" in steps["ESP-IDF (IDF_PATH)"]["install"]
    platforms = [s for s in steps.values() if s["name"].startswith("PlatformIO platform")]
    for step in platforms:
        assert step["install"].startswith("pio pkg install -g --platform ")
    assert all(t["source"] == "manual" for t in report["tools"] if t["name"] in steps)
    assert tool(report, "arm-none-eabi-gcc")["source"] == "debian" and tool(report, "pyserial")["source"] == "pypi"


def test_a_tool_of_this_environment_off_path_says_to_activate_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`.venv/bin/rac-fw doctor` without activating the venv: west is installed next to the interpreter
    but not on PATH, and doctor says exactly that instead of "pip install west" again."""
    import subprocess
    import sys
    import sysconfig
    from pathlib import Path

    scripts = Path(sysconfig.get_path("scripts"))
    if not (scripts / "west").is_file():
        if IN_CI:
            pytest.fail("west is not in this environment's scripts directory (.ci/setup installs the bench extra)")
        pytest.skip("west is not installed in this environment's scripts directory")
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-m", "rac_fw.cli", "doctor", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    west = tool(json.loads(proc.stdout), "west")
    assert west["present"] is False
    assert west["problem"] == f"is installed in {scripts}, which is not on PATH"
    assert west["install"] in (f". {scripts / 'activate'}", f"export PATH={scripts}:$PATH")
