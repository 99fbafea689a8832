"""``rac-fw plan``: exit codes, located evidence, versioned deterministic JSON, files with their hashes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.domains.firmware.pipeline import PLAN_RESULT_VERSION
from rac_fw.resources import data_dir

EXAMPLES = data_dir("examples")
runner = CliRunner()


def _plan(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["plan", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def test_adc_dt_for_nrf52840_writes_a_zephyr_app_whose_hashes_match(tmp_path: Path) -> None:
    out = tmp_path / "app"
    code, stdout = _plan(str(EXAMPLES / "adc_dt.yaml"), "--target", "nrf52840", "--out", str(out), "--json")
    assert code == 0, stdout
    doc = json.loads(stdout)
    assert doc["version"] == PLAN_RESULT_VERSION and doc["status"] == "pass"
    assert (doc["target"], doc["framework"]) == ("nrf52840", "zephyr")
    assert doc["verdicts"] and all(v["passed"] for v in doc["verdicts"])
    files = {f["path"]: f for f in doc["artifact"]["files"]}
    assert {"src/main.c", "prj.conf", "CMakeLists.txt", "boards/nrf52840dk_nrf52840.overlay"} <= set(files)
    for path, entry in files.items():
        assert hashlib.sha256((out / path).read_bytes()).hexdigest() == entry["sha256"]
    main = (out / "src/main.c").read_text()
    assert "adc_read_dt" in main and "adc_raw_to_millivolts_dt" in main and "k_msleep(1000)" in main


def test_retarget_to_stm32h743_and_same_plan_gives_the_same_bytes(tmp_path: Path) -> None:
    args = (str(EXAMPLES / "adc_dt.yaml"), "--target", "stm32h743", "--out", str(tmp_path / "h7"), "--json")
    code, first = _plan(*args)
    assert code == 0, first
    assert (tmp_path / "h7" / "boards" / "nucleo_h743zi.overlay").is_file()
    assert not (tmp_path / "h7" / "boards" / "nrf52840dk_nrf52840.overlay").exists()
    _, second = _plan(*args)
    assert first == second


def test_dma_example_on_stm32h743_carries_cache_maintenance(tmp_path: Path) -> None:
    code, stdout = _plan(str(EXAMPLES / "dma_h7_cache.yaml"), "--out", str(tmp_path), "--json")
    assert code == 0, stdout
    main = (tmp_path / "src" / "main.c").read_text()
    assert main.index("sys_cache_data_flush_range") < main.index("dma_start(") < main.index("sys_cache_data_invd_range")
    assert "__aligned(32)" in main


def test_human_output_is_a_table_and_nothing_is_written_without_out(tmp_path: Path) -> None:
    code, stdout = _plan(str(EXAMPLES / "gpio_blink.yaml"))
    assert code == 0
    assert "pass" in stdout and "src/main.c" in stdout and "not written" in stdout


def test_malformed_plan_is_invalid_with_a_located_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("target: nrf52840\noperations:\n  - op: gpio_blink\n    led: led0\n    period_ms: [oops\n")
    code, stdout = _plan(str(bad), "--json")
    assert code == 2
    evidence = json.loads(stdout)["evidence"]
    assert evidence[0]["code"] == "E_SYNTAX" and "line" in evidence[0]["location"]


def test_unknown_field_and_unknown_target_are_invalid_with_relaxations(tmp_path: Path) -> None:
    plan = tmp_path / "typo.yaml"
    plan.write_text("target: nrf52840\noperations:\n  - {op: gpio_blink, led: led0, period_msec: 100}\n")
    code, stdout = _plan(str(plan), "--json")
    assert code == 2
    codes = {e["code"] for e in json.loads(stdout)["evidence"]}
    assert "E_PLAN_UNKNOWN_FIELD" in codes
    code, stdout = _plan(str(EXAMPLES / "gpio_blink.yaml"), "--target", "nrf52833", "--json")
    assert code == 2
    evidence = json.loads(stdout)["evidence"][0]
    assert evidence["code"] == "E_UNKNOWN_TARGET" and evidence["relaxations"]


def test_infeasible_plan_on_the_target_is_invalid(tmp_path: Path) -> None:
    plan = tmp_path / "dtcm.yaml"
    plan.write_text(
        "target: stm32h743\n"
        "resources:\n"
        "  buffers:\n"
        "    - {name: src, size_bytes: 256, role: dma_mem, placement: DTCM}\n"
        "    - {name: dst, size_bytes: 256, role: dma_mem}\n"
        "operations:\n"
        "  - {op: dma_mem2mem, src: src, dst: dst}\n"
    )
    code, stdout = _plan(str(plan), "--json")
    assert code == 2
    evidence = json.loads(stdout)["evidence"]
    assert any(e["code"] == "E_DMA_UNREACHABLE" and "src" in e["objects"] for e in evidence), evidence


def test_unknown_framework_is_a_usage_error() -> None:
    code, stdout = _plan(str(EXAMPLES / "gpio_blink.yaml"), "--framework", "arduino", "--json")
    assert code == 2
    assert json.loads(stdout)["evidence"][0]["code"] == "E_USAGE"


def test_bare_build_without_out_builds_into_the_default_directory(tmp_path: Path, monkeypatch) -> None:
    """`--build` alone means `--build auto`, and a missing `--out` defaults to .rac-fw/out/…"""
    require_tool("arm-none-eabi-gcc")
    from rac_fw.cli import optional_values

    monkeypatch.chdir(tmp_path)
    argv = optional_values(["plan", str(EXAMPLES / "uart_hello.yaml"), "--framework", "baremetal",
                                      "--build", "--json"])
    assert "--build=auto" in argv
    result = runner.invoke(app, argv)
    doc = json.loads(result.stdout)
    assert result.exit_code == 0, doc["evidence"]
    assert doc["build"]["backend"] == "gcc" and Path(doc["build"]["image"]).is_file()
    assert Path(doc["artifact"]["dir"]).resolve().is_relative_to(tmp_path / ".rac-fw" / "out")


def test_build_with_a_missing_builder_is_a_failure_with_install_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With or without the west tool on PATH, no Zephyr workspace here: the build fails with the steps."""
    monkeypatch.delenv("ZEPHYR_BASE", raising=False)
    monkeypatch.chdir(tmp_path)
    code, stdout = _plan(str(EXAMPLES / "gpio_blink.yaml"), "--out", str(tmp_path), "--build", "west", "--json")
    doc = json.loads(stdout)
    assert code == 1, doc
    assert doc["status"] == "fail"
    assert any(v["predicate"] == "build" and not v["passed"] for v in doc["verdicts"])
    assert any(e["code"] == "E_TOOL_MISSING" for e in doc["evidence"])


def test_console_entry_point_runs_without_a_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rac_fw.cli", "plan", str(tmp_path / "missing.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "E_FILE" in proc.stderr + proc.stdout


def test_plan_builds_and_runs_the_uart_example_in_qemu(tmp_path: Path) -> None:
    """The whole pipeline: validate → lower (bare metal) → verify → gcc build → QEMU console verdict."""
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    code, stdout = _plan(
        str(EXAMPLES / "uart_hello.yaml"), "--framework", "baremetal", "--out", str(tmp_path), "--run", "qemu", "--json"
    )
    doc = json.loads(stdout)
    assert code == 0, doc["evidence"]
    assert doc["build"]["ok"] and doc["run"]["ok"]
    predicates = {v["predicate"]: v["passed"] for v in doc["verdicts"]}
    assert predicates["build"] is True
    assert any("hello" in p and ok for p, ok in predicates.items()), predicates
    assert "hello from rac-fw" in (tmp_path / "console.log").read_text()
