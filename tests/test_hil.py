"""The bench: the example hardware map, `rac-fw hil list|flash|run`, the board runner and the pytest
plugin — with the QEMU "board" going through the same runner, fixtures and expectation engine as a
real board, and real boards represented by what this machine really has (no probe, no such port)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.domains.firmware.backends import FlashRequest, RunRequest
from rac_fw.domains.firmware.hil.bench import BenchError, load_bench
from rac_fw.domains.firmware.hil.board import BoardRunner, board_runner, image_for, runner_for
from rac_fw.domains.firmware.hil.consent import Consent
from tests.conftest import REPO, require_tool

PLUGIN = "rac_fw.domains.firmware.hil.pytest_plugin"

BENCH = REPO / "hil" / "bench.yaml"


def write_bench(path: Path, boards: list[dict[str, object]]) -> Path:
    path.write_text(yaml.safe_dump(boards))
    return path


def test_example_bench_has_a_qemu_board_and_real_boards() -> None:
    bench = load_bench(BENCH)
    qemu = bench.board("qemu-stm32f407")
    assert qemu.runner == "qemu" and qemu.target == "stm32f407" and qemu.expect
    assert bench.resolve(qemu.app).is_file()  # type: ignore[arg-type]
    real = {b.target: b for b in bench.boards if b.runner != "qemu"}
    assert set(real) == {"stm32f407", "stm32h743", "nrf52840", "esp32s3"}
    assert real["esp32s3"].runner == "esptool" and real["stm32h743"].runner == "pyocd"
    assert all(b.serial and b.probe for b in real.values() if b.runner == "pyocd")


def test_bench_errors_are_located(tmp_path: Path) -> None:
    bench = write_bench(
        tmp_path / "bench.yaml",
        [
            {"id": "a", "target": "stm32f407", "runner": "qemu"},
            {"id": "b", "target": "stm32f407", "runner": "openocd", "baud": -1},
            {"id": "a", "target": "stm32f999", "runner": "pyocd"},
        ],
    )
    with pytest.raises(BenchError) as err:
        load_bench(bench)
    where = {e.location for e in err.value.evidence}
    assert f"{bench}: [1].runner" in where and f"{bench}: [1].baud" in where
    messages = " | ".join(e.message for e in err.value.evidence)
    assert "unknown target 'stm32f999'" in messages and "board id 'a' appears more than once" in messages
    (tmp_path / "map.yaml").write_text("boards: {}\n")
    with pytest.raises(BenchError, match="a YAML list of boards"):
        load_bench(tmp_path / "map.yaml")
    with pytest.raises(BenchError, match="bench file not found"):
        load_bench(tmp_path / "absent.yaml")


def test_hil_list_shows_port_state() -> None:
    result = CliRunner().invoke(app, ["hil", "list", "--bench", str(BENCH)])
    assert result.exit_code == 0
    assert "qemu-stm32f407" in result.output and "emulated" in result.output
    assert "(missing)" in result.output or "(present)" in result.output


def test_board_whose_port_does_not_exist_fails_clearly_within_its_wait(tmp_path: Path) -> None:
    port = "/dev/serial/by-id/usb-rac-fw-test-absent-if00"
    assert not os.path.exists(port)
    bench = write_bench(
        tmp_path / "bench.yaml",
        [{"id": "nucleo", "target": "stm32h743", "runner": "pyocd", "serial": port, "port_wait": 1.0}],
    )
    elf = tmp_path / "app.elf"
    elf.write_bytes(b"\x7fELF" + bytes(60))
    started = time.monotonic()
    result = CliRunner().invoke(
        app,
        ["hil", "run", "nucleo", "--bench", str(bench), "--app", str(elf), "--target", "stm32h743",
         "--expect", "hello", "--json", "--allow-flash"],
    )  # fmt: skip
    assert time.monotonic() - started < 6
    assert result.exit_code == 1
    assert '"E_PORT_MISSING"' in result.stdout
    assert f"serial port {port} not found after waiting 1 s" in result.stdout


def test_target_mismatch_is_refused_before_touching_the_board(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "b.yaml", [{"id": "h7", "target": "stm32h743", "runner": "pyocd"}])
    runner = board_runner("h7", Consent(True, bench))
    flashed = runner.flash(FlashRequest(image=tmp_path / "f407.elf", target="stm32f407"))
    assert not flashed.ok and flashed.evidence[0].code == "E_TARGET_MISMATCH"
    assert "refusing to flash" in flashed.evidence[0].message
    ran = runner.run(RunRequest(tmp_path / "f407.elf", "stm32f407", ("x",), 1.0, tmp_path))
    assert not ran.ok and ran.evidence[0].code == "E_TARGET_MISMATCH"


def test_bare_elf_needs_an_explicit_target(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench.yaml", [{"id": "h7", "target": "stm32h743", "runner": "pyocd"}])
    elf = tmp_path / "app.elf"
    elf.write_bytes(b"\x7fELF" + bytes(60))
    result = CliRunner().invoke(app, ["hil", "flash", "h7", str(elf), "--bench", str(bench), "--allow-flash"])
    assert result.exit_code == 2
    assert "pass --target so the board match is explicit" in result.output.replace("\n", " ")
    image, target, evidence = image_for(tmp_path / "notes.txt", tmp_path / "work")
    assert image is None and evidence[0].code == "E_FILE"


def test_board_on_a_real_port_without_its_probe(tmp_path: Path) -> None:
    """The console opens (a real pty), then pyOCD finds no probe: the flash evidence ends the run."""
    master, slave = os.openpty()
    try:
        board = {"id": "h7", "target": "stm32h743", "runner": "pyocd", "serial": os.ttyname(slave)}
        bench = write_bench(tmp_path / "bench.yaml", [board])
        runner = board_runner("h7", Consent(True, bench))
        if _probe_attached():
            pytest.skip("a debug probe is attached to this machine")
        started = time.monotonic()
        result = runner.run(RunRequest(tmp_path / "app.elf", "stm32h743", ("hello",), 1.0, tmp_path))
        assert time.monotonic() - started < 10
    finally:
        os.close(master)
        os.close(slave)
    assert not result.ok
    assert result.evidence[0].code == "E_PROBE_NOT_FOUND"


def _probe_attached() -> bool:
    from rac_fw.domains.firmware.backends.pyocd import PyocdBackend

    return bool(PyocdBackend().probes())


def _qemu_ready() -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")


def test_hil_run_on_the_qemu_board_passes_its_expectations(tmp_path: Path) -> None:
    _qemu_ready()
    result = CliRunner().invoke(app, ["hil", "run", "qemu-stm32f407", "--bench", str(BENCH), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "pass" in result.output
    log = tmp_path / "qemu-stm32f407" / "console.log"
    assert "hello from rac-fw" in log.read_text()


def test_pytest_plugin_runs_the_qemu_board_through_the_same_fixtures(tmp_path: Path) -> None:
    _qemu_ready()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(REPO / "hil"), "--bench", str(BENCH), "--board", "qemu-stm32f407",
         "-p", "no:cacheprovider", "-q", f"--basetemp={tmp_path / 'pt'}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_pytest_plugin_reports_a_missing_port_as_the_test_failure(tmp_path: Path) -> None:
    bench = write_bench(
        tmp_path / "bench.yaml",
        [{"id": "gone", "target": "stm32h743", "runner": "pyocd", "port_wait": 0.5,
          "serial": "/dev/serial/by-id/usb-rac-fw-test-gone-if00",
          "app": str(tmp_path / "app.elf"), "expect": ["hello"]}],
    )  # fmt: skip
    (tmp_path / "app.elf").write_bytes(b"\x7fELF" + bytes(60))
    test = tmp_path / "test_board.py"
    test.write_text("def test_boots(dut):\n    dut.expect()\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(test), "-p", PLUGIN, "--bench", str(bench),
         "--target", "stm32h743", "-p", "no:cacheprovider", "-q", f"--basetemp={tmp_path / 'pt'}",
         f"--rootdir={tmp_path}", "--allow-flash"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "test_boots[gone]" in proc.stdout
    assert "E_PORT_MISSING" in proc.stdout


def test_esptool_board_leaves_the_console_port_free_for_the_flasher(tmp_path: Path) -> None:
    """esptool talks over the console port: the runner must not hold it while flashing."""
    build = tmp_path / "build"
    build.mkdir()
    (build / "app.bin").write_bytes(b"\xff" * 64)
    (build / "flasher_args.json").write_text(
        json.dumps(
            {
                "write_flash_args": ["--flash_mode", "dio"],
                "flash_files": {"0x10000": "app.bin"},
                "extra_esptool_args": {"chip": "esp32s3", "before": "default_reset", "after": "hard_reset"},
            }
        )
    )
    master, slave = os.openpty()
    try:
        board = {"id": "s3", "target": "esp32s3", "runner": "esptool", "serial": os.ttyname(slave)}
        bench = write_bench(tmp_path / "bench.yaml", [board])
        result = board_runner("s3", Consent(True, bench)).run(
            RunRequest(build / "app.elf", "esp32s3", ("hello",), 1.0, tmp_path / "out")
        )
    finally:
        os.close(master)
        os.close(slave)
    assert not result.ok
    codes = [e.code for e in result.evidence]
    assert "E_PORT_BUSY" not in codes
    expected = "E_TOOL_MISSING" if importlib.util.find_spec("esptool") is None else "E_BOARD_NOT_RESPONDING"
    assert codes[0] == expected


def test_a_plan_for_another_chip_is_refused_before_it_is_built(tmp_path: Path) -> None:
    started = time.monotonic()
    result = CliRunner().invoke(
        app, ["hil", "run", "nucleo-h743zi", "--bench", str(BENCH), "--app", str(REPO / "examples" / "uart_hello.yaml"),
              "--expect", "hello", "--out", str(tmp_path), "--allow-flash"],
    )  # fmt: skip
    assert time.monotonic() - started < 5
    assert result.exit_code == 1
    assert "is for stm32f407 but the board carries a stm32h743" in result.output.replace("\n", " ")
    assert not (tmp_path / "nucleo-h743zi").exists(), "nothing was generated or built"


def test_running_the_whole_bench_reports_every_board(tmp_path: Path) -> None:
    """One board's problem (no app, no port, no consent) is that board's verdict; the others still run.
    Without --allow-flash only the emulated board runs; the real ones are refused by the consent gate."""
    _qemu_ready()
    unconsented = CliRunner().invoke(app, ["hil", "run", "--bench", str(BENCH), "--out", str(tmp_path), "--json"])
    answers = {f["task"]: f for f in json.loads(unconsented.stdout)}
    assert answers.pop("hil:qemu-stm32f407")["status"] == "pass"
    assert {f["status"] for f in answers.values()} == {"invalid"}
    assert {f["evidence"][0]["code"] for f in answers.values()} == {"E_CONSENT"}
    result = CliRunner().invoke(app, ["hil", "run", "--bench", str(BENCH), "--out", str(tmp_path), "--json",
                                      "--allow-flash"])
    statuses = {f["task"]: f["status"] for f in json.loads(result.stdout)}
    assert statuses["hil:qemu-stm32f407"] == "pass"
    present = {b.id: b.serial is not None and os.path.exists(b.serial) for b in load_bench(BENCH).boards}
    if not present["disc1-f407"]:
        assert statuses["hil:disc1-f407"] == "fail"
    assert statuses["hil:nucleo-h743zi"] == "invalid", "no app in the example bench for this board"
    assert result.exit_code == 2


def _run_board_test(tmp_path: Path, bench: Path, body: str, *args: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_board.py"
    test.write_text(body)
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(test), "-p", PLUGIN, "--bench", str(bench),
         "-p", "no:cacheprovider", "-q", f"--basetemp={tmp_path / 'pt'}", f"--rootdir={tmp_path}",
         f"--root-logdir={tmp_path / 'logs'}", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_an_unmet_dut_expectation_fails_with_the_console_and_its_log_file(tmp_path: Path) -> None:
    """pytest-embedded's own failure on the QEMU board: what was expected, what came, where the log is."""
    _qemu_ready()
    body = "def test_wrong_line(dut):\n    dut.expect_exact('goodbye from rac-fw', timeout=2)\n"
    proc = _run_board_test(tmp_path, BENCH, body, "--board", "qemu-stm32f407")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'Not found "goodbye from rac-fw"' in proc.stdout
    logs = list((tmp_path / "logs").rglob("dut.log"))
    assert logs and "hello from rac-fw" in logs[0].read_text(errors="replace")


def test_serial_dut_flashes_before_the_test_and_reports_the_missing_probe(tmp_path: Path) -> None:
    """A real port (a pty) opens; the flash through the bench runner (pyOCD) finds no probe: that evidence
    fails the test before its body runs."""
    if _probe_attached():
        pytest.skip("a debug probe is attached to this machine")
    master, slave = os.openpty()
    try:
        bench = write_bench(
            tmp_path / "bench.yaml",
            [{"id": "h7", "target": "stm32h743", "runner": "pyocd", "serial": os.ttyname(slave),
              "app": str(tmp_path / "app.elf")}],
        )  # fmt: skip
        (tmp_path / "app.elf").write_bytes(b"\x7fELF" + bytes(60))
        proc = _run_board_test(
            tmp_path, bench, "def test_boots(dut):\n    dut.expect('hello')\n", "--target", "stm32h743", "--allow-flash"
        )
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "test_boots[h7]" in proc.stdout and "E_PROBE_NOT_FOUND" in proc.stdout


def test_a_bare_elf_for_another_chip_is_refused_by_the_dut(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench.yaml", [{"id": "q", "target": "stm32f407", "runner": "qemu"}])
    (tmp_path / "app.elf").write_bytes(b"\x7fELF" + bytes(60))
    proc = _run_board_test(
        tmp_path, bench, "def test_boots(dut):\n    dut.expect('hello')\n", "--app", str(tmp_path / "app.elf"),
        "--target", "stm32h743",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "E_TARGET_MISMATCH" in proc.stdout and "refusing to flash" in proc.stdout


def test_board_run_specs_resolve_through_the_bench(tmp_path: Path) -> None:
    bench = tmp_path / "bench.yaml"
    bench.write_text("- {id: disco, target: stm32f407, runner: pyocd, serial: /dev/ttyACM7}\n")
    runner = runner_for("board:disco", Consent(True, bench))
    assert isinstance(runner, BoardRunner) and runner.board.id == "disco"
    assert runner_for("qemu", Consent()).name == "qemu"
    with pytest.raises(BenchError) as missing:
        runner_for("board:nucleo", Consent(True, bench))
    assert missing.value.evidence[0].code == "E_UNKNOWN_BOARD"
