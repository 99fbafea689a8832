"""Devices under test with pytest-embedded's DUT API, put on the bench by rac-fw.

On-board tests are written against pytest-embedded's ``Dut`` (``dut.expect``, ``dut.expect_exact``,
``dut.write``, ``dut.logfile``), so a bench engineer's habits and tooling carry over. What rac-fw adds
is everything before the first byte: building the app, the target-match safety, flashing through the
bench file's runner, and the port checks with located evidence.

* Real boards: pytest-embedded-serial's ``SerialDut`` over the board's console port. rac-fw checks the
  port (``E_PORT_MISSING``/``E_PORT_BUSY``…), flashes with the board's runner (pyOCD holds no port, so
  the console is read from the first boot line; esptool flashes over the console port, so the port is
  opened after the flash and the chip reset through RTS, as ``idf.py monitor`` does).
* QEMU "boards": pytest-embedded-qemu is not used, because it always appends ``-drive file=…,if=mtd``,
  which qemu-system-arm's Cortex-M machines reject. :class:`QemuDut` runs rac-fw's own QEMU command
  line (machine and console wiring from the target's facts) and streams its console into the same
  pexpect buffer and log file, so one test file runs on both.

pytest-embedded comes with ``pip install 'rac-fw[bench]'``; importing this module without it raises
``ImportError``, which the pytest plugin turns into a usage error naming that step.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from pytest_embedded.app import App
from pytest_embedded.dut import Dut
from pytest_embedded.log import DuplicateStdoutPopen, MessageQueue
from pytest_embedded.utils import Meta
from pytest_embedded_serial.dut import SerialDut
from pytest_embedded_serial.serial import Serial

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.backends import FlashRequest
from rac_fw.domains.firmware.backends.qemu import QemuSetupError, machine_for, qemu_command
from rac_fw.domains.firmware.backends.serial import PortError
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.hil.bench import BenchBoard
from rac_fw.domains.firmware.hil.board import BoardRunner, serial_backend


class BenchSetupError(Exception):
    """The board could not be brought up for a test; ``evidence`` says why (the test fails with it)."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(f"{e.code}: {e.message}" for e in evidence))


class QemuConsole(DuplicateStdoutPopen):
    """qemu-system-arm with its console on stdout, forwarded into pytest-embedded's message queue."""

    SOURCE = "QEMU"


class QemuDut(Dut):
    """A QEMU "board" behind pytest-embedded's DUT API (see the module docstring for why not -qemu)."""

    qemu: QemuConsole

    def exit_status(self, timeout: float = 5.0) -> int:
        """QEMU's exit status: the firmware's semihosting SYS_EXIT code (0 = every self-test passed).

        Bounded: a firmware that never exits is killed (its whole process group) after ``timeout``.
        """
        try:
            return self.qemu.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.qemu.pid, signal.SIGKILL)
            self.qemu.wait()
            raise TimeoutError(f"QEMU did not exit within {timeout:g} s and was killed; see {self.logfile}") from None

    def write(self, s: str | bytes) -> None:
        self.qemu.write(s)

    def close(self) -> None:
        if self.qemu.poll() is None:
            os.killpg(self.qemu.pid, signal.SIGKILL)
            self.qemu.wait()
        self.qemu.close()
        super().close()


def qemu_dut(
    board: BenchBoard,
    image: Path,
    target: str,
    *,
    msg_queue: MessageQueue,
    pexpect_proc: object,
    pexpect_logfile: str,
    test_case_name: str,
    meta: Meta,
) -> QemuDut:
    """Start ``image`` in the QEMU machine of ``target`` (rac-fw's wiring) behind the DUT API."""
    try:
        machine, index = machine_for(load_target(target))
    except QemuSetupError as exc:
        raise BenchSetupError([exc.evidence]) from None
    console = QemuConsole(msg_queue, qemu_command(image, machine, index), meta=meta, start_new_session=True)
    return QemuDut(
        qemu=console,
        pexpect_proc=pexpect_proc,
        msg_queue=msg_queue,
        app=App(app_path=str(image.parent), build_dir=str(image.parent)),
        pexpect_logfile=pexpect_logfile,
        test_case_name=test_case_name,
        meta=meta,
        board=board,
        image=image,
        target=target,
    )


def _console_port(board: BenchBoard) -> str:
    """The board's console port, checked now: present, openable, not held by another program."""
    if not board.connected:
        raise BenchSetupError(
            [
                Evidence(
                    code="E_BOARD_DISCONNECTED",
                    message=f"board {board.id!r} is marked `connected: false` in the bench file",
                    objects=[board.id],
                )
            ]
        )
    if board.serial is None:
        raise BenchSetupError(
            [
                Evidence(
                    code="E_PORT_MISSING",
                    message=f"board {board.id!r} has no `serial:` port in the bench file",
                    objects=[board.id],
                )
            ]
        )
    port = serial_backend().console(board.serial, board.baud, board.port_wait)
    try:
        port.open()
    except PortError as exc:
        raise BenchSetupError([exc.evidence]) from None
    port.close()
    return board.serial


def serial_dut(
    runner: BoardRunner,
    image: Path,
    target: str,
    *,
    msg_queue: MessageQueue,
    pexpect_proc: object,
    pexpect_logfile: str,
    test_case_name: str,
    meta: Meta,
) -> SerialDut:
    """Flash ``image`` onto the real board ``runner`` is bound to (target match first; the runner comes from
    the consent gate) and return its console as a ``SerialDut``."""
    board = runner.board
    port = _console_port(board)
    shares_port = board.runner == "esptool"
    serial: Serial | None = None
    if not shares_port:
        serial = Serial(msg_queue, port=port, baud=board.baud, meta=meta)
    flashed = runner.flash(FlashRequest(image=image, target=target))
    if not flashed.ok:
        if serial is not None:
            serial.close()
        raise BenchSetupError(flashed.evidence)
    if serial is None:
        serial = Serial(msg_queue, port=port, baud=board.baud, meta=meta)
        _pulse_reset(serial)
    return SerialDut(
        serial=serial,
        pexpect_proc=pexpect_proc,
        msg_queue=msg_queue,
        app=App(app_path=str(image.parent), build_dir=str(image.parent)),
        pexpect_logfile=pexpect_logfile,
        test_case_name=test_case_name,
        meta=meta,
        board=board,
        image=image,
        target=target,
    )


def _pulse_reset(serial: Serial) -> None:
    """Reset through RTS (EN on ESP32 dev kits) so the console is read from the first boot line."""
    try:
        serial.proc.dtr = False
        serial.proc.rts = True
        time.sleep(0.1)
        serial.proc.rts = False
    except OSError:
        pass  # no modem lines (a pty, some adapters): esptool's own hard reset has to do
