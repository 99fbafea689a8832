"""The consent gate (``hil/consent.py``): no path opens a board's port, enumerates a probe or flashes
without ``--allow-flash`` and a bench file naming the board.

The hardware backends are the real classes with recording subclasses registered under their names
(``tests/hardware_recorder.py``); every path is driven as users drive it — the CLI, the MCP server
over stdio (a real client), a pytest session with the plugin — once without consent (nothing is recorded)
and once with it (the same call reaches the recorder: the gate, not a missing probe, made the difference).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import hardware_recorder
import pytest
import yaml
from conftest import REPO, require_tool
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.domains.firmware.backends import select_runner
from rac_fw.domains.firmware.hil.bench import BenchError
from rac_fw.domains.firmware.hil.board import runner_for
from rac_fw.domains.firmware.hil.consent import Consent, grant

TESTS = Path(__file__).resolve().parent
PLAN = {"target": "stm32f407", "operations": [{"op": "uart_print", "message": "hello from rac-fw"}]}


@pytest.fixture
def pty() -> Iterator[str]:
    """A real serial port (a pseudo-terminal's slave end) for the "board"."""
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


@pytest.fixture
def bench(tmp_path: Path, pty: str) -> Path:
    """A bench with two real boards (pyOCD and esptool, console on the pty) and the QEMU board."""
    path = tmp_path / "bench" / "bench.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump([
        {"id": "f4-board", "target": "stm32f407", "runner": "pyocd", "serial": pty, "port_wait": 0.5,
         "probe": "0123456789"},
        {"id": "s3-board", "target": "esp32s3", "runner": "esptool", "serial": pty, "port_wait": 0.5},
        {"id": "qemu-f4", "target": "stm32f407", "runner": "qemu"},
    ]))  # fmt: skip
    return path


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The recorders, installed in this process and in every subprocess the test starts."""
    path = tmp_path / "hardware.jsonl"
    monkeypatch.setenv(hardware_recorder.LOG, str(path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(REPO), os.environ.get("PYTHONPATH", "")]))
    replaced = hardware_recorder.install()
    try:
        yield path
    finally:
        hardware_recorder.uninstall(replaced)


def elf(tmp_path: Path) -> Path:
    image = tmp_path / "app.elf"
    image.write_bytes(b"\x7fELF" + bytes(60))
    return image


def test_consent_gate_cli_hil_flash_and_run(tmp_path: Path, bench: Path, log: Path) -> None:
    """`rac-fw hil flash|run` on a real board: refused (exit 2, E_CONSENT) without --allow-flash, nothing
    recorded; with it the port and the flasher are reached (pyOCD's own evidence ends the run here)."""
    image = str(elf(tmp_path))
    runs = {
        "flash": ["hil", "flash", "f4-board", image, "--bench", str(bench), "--target", "stm32f407", "--json"],
        "run": ["hil", "run", "f4-board", "--bench", str(bench), "--app", image, "--target", "stm32f407",
                "--expect", "hello", "--timeout", "1", "--json"],
        "run-esptool": ["hil", "run", "s3-board", "--bench", str(bench), "--app", image, "--target", "esp32s3",
                        "--expect", "hello", "--timeout", "1", "--json"],
    }  # fmt: skip
    for name, args in runs.items():
        refused = CliRunner().invoke(app, args)
        assert refused.exit_code == 2, (name, refused.output)
        assert "E_CONSENT" in refused.output and "--allow-flash" in refused.output, name
        assert hardware_recorder.calls(log) == [], name
    CliRunner().invoke(app, [*runs["flash"], "--allow-flash"])
    assert [c["call"] for c in hardware_recorder.calls(log)][:1] == ["pyocd.flash"]
    log.unlink()
    CliRunner().invoke(app, [*runs["run"], "--allow-flash"])
    assert [c["call"] for c in hardware_recorder.calls(log)][:2] == ["serial.console", "pyocd.flash"]
    log.unlink()
    CliRunner().invoke(app, [*runs["run-esptool"], "--allow-flash"])
    assert [c["call"] for c in hardware_recorder.calls(log)][:2] == ["serial.console", "esptool.flash"]


def test_consent_gate_cli_plan_run_board(tmp_path: Path, bench: Path, log: Path) -> None:
    """`rac-fw plan --run board:ID` is refused before anything is built; a serial runner named directly is
    refused too (only a bench entry says which port is a board's); with --allow-flash the board is reached."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    base = ["plan", str(plan), "--framework", "baremetal", "--bench", str(bench), "--json"]
    for run in ("board:f4-board", "serial"):
        refused = CliRunner().invoke(app, [*base, "--out", str(tmp_path / run.replace(":", "-")), "--run", run])
        assert refused.exit_code == 2, refused.output
        assert "E_CONSENT" in refused.output and '"build": null' in refused.output
    assert hardware_recorder.calls(log) == []
    require_tool("arm-none-eabi-gcc")
    CliRunner().invoke(app, [*base, "--out", str(tmp_path / "ok"), "--run", "board:f4-board", "--allow-flash"])
    assert [c["call"] for c in hardware_recorder.calls(log)][:2] == ["serial.console", "pyocd.flash"]


def test_consent_gate_decides_once_for_every_front_end(bench: Path, tmp_path: Path) -> None:
    """The one function: ids are pattern-checked, no bench means no board, an emulator needs no consent."""
    for hostile in ("../../etc/passwd", "ab cd", "", "x" * 65, "board;rm"):
        with pytest.raises(BenchError) as bad:
            grant(hostile, Consent(True, bench))
        assert bad.value.evidence[0].code == "E_UNKNOWN_BOARD" and bad.value.evidence[0].objects == []
        assert hostile not in bad.value.evidence[0].message or not hostile
    with pytest.raises(BenchError) as unnamed:
        grant("f4-board", Consent(True, None, where="the server's operator"))
    assert unnamed.value.evidence[0].code == "E_CONSENT" and "no bench file" in unnamed.value.evidence[0].message
    assert grant("qemu-f4", Consent(False, bench)).hardware is False
    assert grant("f4-board", Consent(True, bench)).hardware is True
    assert runner_for("qemu", Consent()) is not None and select_runner("serial").hardware


async def _mcp_runs(workdir: Path, cwd: Path, *server: str) -> dict[str, dict]:
    """A real MCP client over stdio: a clean plan, then `run` on board:f4-board, `flash` to it, and `run` with
    a hostile board id, on a server started with ``server`` options (recorders imported first)."""
    from test_mcp import result

    launcher = "import hardware_recorder, runpy; runpy.run_module('rac_fw.cli', run_name='__main__')"
    params = StdioServerParameters(command=sys.executable, args=["-c", launcher, "serve", "mcp", "--workdir",
                                                                 str(workdir), *server],
                                   env=dict(os.environ), cwd=str(cwd))  # fmt: skip
    async with Client(params, read_timeout_seconds=180) as client:
        sid = result(await client.call_tool("start_episode", {"domain": "firmware", "task": "stm32f407"}))["session"]
        planned = result(await client.call_tool("plan", {"session": sid, "plan": PLAN, "framework": "baremetal"}))
        assert planned["status"] == "pass", planned
        return {
            "run": result(await client.call_tool("run", {"session": sid, "runner": "board:f4-board",
                                                         "timeout_s": 2})),
            "flash": result(await client.call_tool("flash", {"session": sid, "board": "f4-board"})),
            "hostile": result(await client.call_tool("run", {"session": sid, "runner": "board:../../etc/passwd"})),
        }


def test_consent_gate_mcp_run_and_flash(tmp_path: Path, bench: Path, log: Path) -> None:
    """MCP `run board:ID` (issue 27: it used to open the port and enumerate probes on any server) and `flash`:
    without --allow-flash nothing is touched; without --bench the server does not fall back to
    ./hil/bench.yaml; with both, the board is reached."""
    cwd = tmp_path / "cwd"
    (cwd / "hil").mkdir(parents=True)
    (cwd / "hil" / "bench.yaml").write_text(bench.read_text())  # what a silent fallback would have found
    no_consent = asyncio.run(_mcp_runs(tmp_path / "a", cwd, "--bench", str(bench)))
    no_bench = asyncio.run(_mcp_runs(tmp_path / "b", cwd, "--allow-flash"))
    assert hardware_recorder.calls(log) == []
    for answers in (no_consent, no_bench):
        assert answers["run"]["status"] == "invalid" and answers["run"]["run"] is None, answers["run"]
        assert answers["run"]["evidence"][0]["code"] == "E_CONSENT"
        assert answers["flash"]["status"] == "dry-run"
        hostile = answers["hostile"]["evidence"][0]
        assert hostile["code"] == "E_UNKNOWN_BOARD" and "passwd" not in hostile["message"]
    assert "--allow-flash" in no_consent["run"]["evidence"][0]["relaxations"][0]["description"]
    assert "no bench file" in no_bench["run"]["evidence"][0]["message"]
    require_tool("arm-none-eabi-gcc")
    granted = asyncio.run(_mcp_runs(tmp_path / "c", cwd, "--bench", str(bench), "--allow-flash"))
    reached = [c["call"] for c in hardware_recorder.calls(log)]
    assert reached[:2] == ["serial.console", "pyocd.flash"] and "pyocd.flash" in reached[2:], reached
    # pyOCD itself answers now (no F4 pack, or no probe on this machine): the gate was not the refusal
    assert granted["flash"]["status"] == "fail" and granted["flash"]["evidence"][0]["code"] != "E_CONSENT"


def test_consent_gate_pytest_plugin(tmp_path: Path, bench: Path, log: Path) -> None:
    """The plugin's `dut` on a real board: the test fails with E_CONSENT before any port is opened; with
    --allow-flash the port is opened and the flash attempted (pyOCD's own evidence fails the test here)."""
    test = tmp_path / "test_board.py"
    test.write_text("def test_boots(dut):\n    dut.expect('hello')\n")
    base = [sys.executable, "-m", "pytest", str(test), "-p", "hardware_recorder", "-p",
            "rac_fw.domains.firmware.hil.pytest_plugin", "--bench", str(bench), "--board", "f4-board", "--app",
            str(elf(tmp_path)), "--target", "stm32f407", "-p", "no:cacheprovider", "-q",
            f"--rootdir={tmp_path}", f"--root-logdir={tmp_path / 'logs'}"]  # fmt: skip
    refused = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "E_CONSENT" in refused.stdout, refused.stdout + refused.stderr
    assert hardware_recorder.calls(log) == []
    allowed = subprocess.run([*base, "--allow-flash"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert allowed.returncode == 1 and "E_CONSENT" not in allowed.stdout, allowed.stdout + allowed.stderr
    assert [c["call"] for c in hardware_recorder.calls(log)][:2] == ["serial.console", "pyocd.flash"]
