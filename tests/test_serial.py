"""The board console runner against real pseudo-terminal pairs (os.openpty).

The pty's slave end is the "board's" serial port; the test writes the firmware's output into the
master end. Re-enumeration is a udev-style symlink that vanishes with its device and comes back
pointing at a new one, exactly what a USB CDC console does across a reset.
"""

from __future__ import annotations

import contextlib
import os
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from rac_fw.domains.firmware.backends import RunRequest, get_backend
from rac_fw.domains.firmware.backends.serial import CONSOLE_LOG


class Pty:
    """One pseudo-terminal pair: ``write`` is the board talking, ``path`` its port."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def write_once_open(self, data: bytes, settle_s: float = 0.1) -> None:
        """Write after a reader has opened the port: pyserial switches the tty to raw mode and then
        flushes its input, so bytes sent earlier would be lost (like a board talking before the
        console is opened), which would make the test depend on thread timing."""
        deadline = time.monotonic() + 5
        while termios.tcgetattr(self.slave)[3] & termios.ICANON and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(settle_s)
        self.write(data)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
def pty() -> Iterator[Pty]:
    pair = Pty()
    yield pair
    pair.close()


def later(delay: float, action) -> threading.Thread:  # type: ignore[no-untyped-def]
    def run() -> None:
        time.sleep(delay)
        action()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def request(port: str, out: Path, *expect: str, timeout: float = 2.0, wait: float = 1.0, forbid=()) -> RunRequest:  # type: ignore[no-untyped-def]
    return RunRequest(
        image=None,
        target="stm32f407",
        expect=expect,
        timeout_s=timeout,
        output_dir=out,
        forbid=tuple(forbid),
        port=port,
        port_wait_s=wait,
    )


def test_ordered_expectations_pass_and_console_is_captured(pty: Pty, tmp_path: Path) -> None:
    banner = b"*** Booting ***\r\nadc ch0 = 1234 mV\r\nready\r\n"
    later(0.0, lambda: pty.write_once_open(banner))
    result = get_backend("serial").run(request(pty.path, tmp_path, r"Booting", r"adc ch0 = \d+ mV", r"^ready$"))
    assert result.ok, result.evidence
    assert [v.measured for v in result.verdicts] == ["*** Booting ***", "adc ch0 = 1234 mV", "ready"]
    assert (tmp_path / CONSOLE_LOG).read_bytes() == banner
    assert result.log == tmp_path / CONSOLE_LOG


def test_order_matters(pty: Pty, tmp_path: Path) -> None:
    later(0.0, lambda: pty.write_once_open(b"ready\nBooting\n"))
    result = get_backend("serial").run(request(pty.path, tmp_path, "Booting", "ready", timeout=1.0))
    assert not result.ok
    assert [v.passed for v in result.verdicts] == [True, False]
    assert result.evidence[0].code == "E_CONSOLE_EXPECTATION"
    assert "/ready/" in result.evidence[0].message


def test_silent_board_gives_clear_evidence_within_the_timeout(pty: Pty, tmp_path: Path) -> None:
    started = time.monotonic()
    result = get_backend("serial").run(request(pty.path, tmp_path, "hello", timeout=0.8))
    elapsed = time.monotonic() - started
    assert not result.ok
    assert 0.8 <= elapsed < 3.0
    codes = [e.code for e in result.evidence]
    assert codes[0] == "E_BOARD_SILENT"
    assert "printed nothing" in result.evidence[0].message and "115200 baud" in result.evidence[0].message
    assert "E_CONSOLE_EXPECTATION" in codes
    assert (tmp_path / CONSOLE_LOG).read_bytes() == b""


def test_forbidden_line_ends_the_wait_early(pty: Pty, tmp_path: Path) -> None:
    later(0.0, lambda: pty.write_once_open(b"boot\r\n*** HardFault ***\r\n"))
    started = time.monotonic()
    result = get_backend("serial").run(request(pty.path, tmp_path, "boot", "never", timeout=5.0, forbid=[r"HardFault"]))
    assert not result.ok
    assert time.monotonic() - started < 2.0
    assert result.evidence[0].code == "E_CONSOLE_FORBIDDEN"


def test_missing_port_fails_within_its_wait(tmp_path: Path) -> None:
    started = time.monotonic()
    result = get_backend("serial").run(request("/dev/ttyACM_rac_fw_absent", tmp_path, "x", wait=0.5))
    elapsed = time.monotonic() - started
    assert not result.ok
    assert 0.5 <= elapsed < 3.0
    assert result.evidence[0].code == "E_PORT_MISSING"
    assert "/dev/ttyACM_rac_fw_absent not found after waiting 0.5 s" in result.evidence[0].message


def test_busy_port_is_reported_at_once(pty: Pty, tmp_path: Path) -> None:
    holder = serial.Serial(pty.path, 115200, exclusive=True)
    try:
        started = time.monotonic()
        result = get_backend("serial").run(request(pty.path, tmp_path, "x", wait=5.0))
        assert time.monotonic() - started < 1.0, "a busy port must not wait for the port timeout"
    finally:
        holder.close()
    assert not result.ok
    assert result.evidence[0].code == "E_PORT_BUSY"
    assert pty.path in result.evidence[0].message


def test_port_appearing_late_is_waited_for(pty: Pty, tmp_path: Path) -> None:
    link = tmp_path / "ttyBOARD"
    later(0.3, lambda: link.symlink_to(pty.path))
    later(0.3, lambda: pty.write_once_open(b"hello after enumeration\n"))
    result = get_backend("serial").run(request(str(link), tmp_path / "out", "hello", wait=2.0))
    assert result.ok, result.evidence


def test_reenumeration_after_reset_is_survived(tmp_path: Path) -> None:
    """The device vanishes mid-run (master closed → EIO) and reappears under the same name."""
    first, second = Pty(), Pty()
    link = tmp_path / "ttyACM-board"
    link.symlink_to(first.path)

    def reenumerate() -> None:
        first.write_once_open(b"flashing done, resetting\n")
        time.sleep(0.1)
        link.unlink()
        first.close()
        time.sleep(0.3)
        link.symlink_to(second.path)
        second.write_once_open(b"app v2 running\n")

    later(0.0, reenumerate)
    try:
        result = get_backend("serial").run(request(str(link), tmp_path / "out", "resetting", "app v2", timeout=4.0))
    finally:
        second.close()
    assert result.ok, result.evidence
    assert b"app v2 running" in (tmp_path / "out" / CONSOLE_LOG).read_bytes()


def test_port_that_never_comes_back_is_lost_within_the_bound(tmp_path: Path) -> None:
    gone = Pty()
    link = tmp_path / "ttyACM-gone"
    link.symlink_to(gone.path)

    def unplug() -> None:
        link.unlink()
        gone.close()

    later(0.2, unplug)
    started = time.monotonic()
    result = get_backend("serial").run(request(str(link), tmp_path / "out", "never", timeout=10.0, wait=0.5))
    assert time.monotonic() - started < 3.0
    assert not result.ok
    assert result.evidence[0].code == "E_PORT_LOST"
    assert "did not come back within 0.5 s" in result.evidence[0].message


def test_reset_pulse_on_a_port_without_modem_lines_is_harmless(pty: Pty) -> None:
    from rac_fw.domains.firmware.backends.serial import SerialPort

    port = SerialPort(pty.path, 115200, wait_s=1.0)
    with port:
        port.pulse_reset()
        pty.write(b"still here\n")
        deadline = time.monotonic() + 2
        seen = b""
        while b"still here" not in seen and time.monotonic() < deadline:
            seen += port.read_chunk(0.05) or b""
    assert b"still here" in seen
