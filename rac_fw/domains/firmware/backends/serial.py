"""The board console runner: read a serial port with pyserial and judge it with the console engine.

It uses the same ordered-regex engine as the QEMU runner (``verify.console``), so a board and the
emulator produce the same verdicts and evidence. The port is held exclusively (a second reader would
steal bytes), waited for within a bound when it is not there yet, and reopened within the same bound
when the device re-enumerates (USB CDC consoles vanish for a moment on reset after a flash). A missing
port, a busy port, a port that does not come back and a board that prints nothing each end as evidence
within a bounded time.
"""

from __future__ import annotations

import contextlib
import glob
import os
import time

from rac_fw.contract import Evidence, Magnitude, Relaxation
from rac_fw.domains.firmware.backends.base import (
    Backend,
    Capability,
    Requirement,
    RunRequest,
    RunResult,
    package_requirement,
    register_backend,
)
from rac_fw.domains.firmware.verify.console import Expectations, match_stream

#: How often a vanished or not-yet-present port is looked for again.
PORT_POLL_S = 0.1

#: Name of the captured console in a run's output directory.
CONSOLE_LOG = "console.log"


class PortError(Exception):
    """The console port could not be used; ``evidence`` says why."""

    def __init__(self, evidence: Evidence):
        self.evidence = evidence
        super().__init__(evidence.message)


def present_ports() -> list[str]:
    """Serial device nodes on this machine (what a user would pick from), for evidence."""
    from serial.tools import list_ports

    found = {p.device for p in list_ports.comports()}
    found.update(glob.glob("/dev/ttyACM*") + glob.glob("/dev/ttyUSB*"))
    return sorted(found)


class SerialPort:
    """An exclusively held console port that survives the device re-enumerating.

    ``read_chunk`` is the transport the console engine polls: bytes (possibly empty) while the port is
    open or briefly gone, ``None`` once it has been gone for longer than ``wait_s``.
    """

    def __init__(self, port: str, baud: int, wait_s: float):
        self.port, self.baud, self.wait_s = port, baud, wait_s
        # A device node (/dev/ttyACM0, a udev symlink) can be checked for existence; COM3 cannot.
        self._is_path = os.sep in port
        self._serial = None  # serial.Serial while open
        self._lost_at: float | None = None
        self.lost_for_good = False
        self.captured = bytearray()

    def open(self) -> None:
        """Open the port, waiting up to ``wait_s`` for it to appear; raise ``PortError`` otherwise."""
        deadline = time.monotonic() + self.wait_s
        while True:
            error = self._try_open()
            if error is None:
                return
            if error.code == "E_PORT_BUSY" or time.monotonic() >= deadline:
                raise PortError(error)
            time.sleep(PORT_POLL_S)

    def wait_present(self) -> None:
        """Wait up to ``wait_s`` for the device node without opening it (for a flasher that needs it)."""
        deadline = time.monotonic() + self.wait_s
        while self._is_path and not os.path.exists(self.port):
            if time.monotonic() >= deadline:
                raise PortError(self._missing())
            time.sleep(PORT_POLL_S)

    def pulse_reset(self) -> None:
        """Reset the chip through the USB-UART's RTS line (wired to EN on ESP32 dev kits), as
        ``idf.py monitor`` does on connect, so the console is read from the first boot line."""
        if self._serial is None:
            return
        try:
            self._serial.dtr = False
            self._serial.rts = True
            time.sleep(0.1)
            self._serial.rts = False
        except OSError:
            pass  # no modem lines (a pty, some adapters): the flasher's own hard reset has to do

    def _try_open(self) -> Evidence | None:
        import serial

        if self._is_path and not os.path.exists(self.port):
            return self._missing()
        try:
            self._serial = serial.Serial(self.port, self.baud, timeout=0, exclusive=True)
        except serial.SerialException as exc:
            text = str(exc)
            if "lock" in text.lower() or "busy" in text.lower() or getattr(exc, "errno", None) == 16:
                return Evidence(
                    code="E_PORT_BUSY",
                    message=f"serial port {self.port} is in use by another program ({text}); close the "
                    "terminal/monitor holding it (see `fuser " + self.port + "`) and retry",
                    objects=[self.port],
                )
            if getattr(exc, "errno", None) in (2, 19, 6):  # ENOENT, ENODEV, ENXIO: not (yet) there
                return self._missing()
            if getattr(exc, "errno", None) == 13:  # EACCES
                return Evidence(
                    code="E_PORT_PERMISSION",
                    message=f"no permission to open {self.port}: add your user to the port's group "
                    "(`sudo usermod -aG dialout $USER`, then log in again)",
                    objects=[self.port],
                )
            return Evidence(code="E_PORT_ERROR", message=f"cannot open {self.port}: {text}", objects=[self.port])
        return None

    def _missing(self) -> Evidence:
        others = [p for p in present_ports() if p != self.port]
        relaxations = [Relaxation(description=f"use one of the present ports ({', '.join(others)})")] if others else []
        relaxations.append(Relaxation(description="plug the board in, or correct `serial:` in the bench file"))
        return Evidence(
            code="E_PORT_MISSING",
            message=f"serial port {self.port} not found after waiting {self.wait_s:g} s; "
            f"ports present: {', '.join(others) or 'none'}",
            objects=[self.port],
            magnitudes=[Magnitude(name="waited", value=self.wait_s, unit="s")],
            relaxations=relaxations,
        )

    def read_chunk(self, wait_s: float) -> bytes | None:
        """Bytes that arrived within ``wait_s``; reopen after a re-enumeration; None when gone for good."""
        import serial

        if self.lost_for_good:
            return None
        if self._serial is None:
            assert self._lost_at is not None
            if time.monotonic() - self._lost_at > self.wait_s:
                self.lost_for_good = True
                return None
            if self._try_open() is None:
                self._lost_at = None
            else:
                time.sleep(min(wait_s, PORT_POLL_S))
            return b""
        try:
            self._serial.timeout = wait_s
            data: bytes = self._serial.read(4096)
        except (serial.SerialException, OSError):
            self._drop()
            return b""
        if not data and self._is_path and not os.path.exists(self.port):
            self._drop()
        self.captured.extend(data)
        return data

    def _drop(self) -> None:
        if self._serial is not None:
            with contextlib.suppress(OSError):
                self._serial.close()
        self._serial = None
        self._lost_at = time.monotonic()

    def close(self) -> None:
        if self._serial is not None:
            self._serial.close()
            self._serial = None

    def __enter__(self) -> SerialPort:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def judge_console(port: SerialPort, request: RunRequest, backend: str, started: float) -> RunResult:
    """Run the expectation engine over an open port and turn the outcome into a ``RunResult``."""
    expectations = Expectations(request.expect, request.timeout_s, request.forbid)
    outcome = match_stream(port.read_chunk, expectations)
    request.output_dir.mkdir(parents=True, exist_ok=True)
    log = request.output_dir / CONSOLE_LOG
    log.write_bytes(bytes(port.captured))
    evidence = outcome.evidence()
    if port.lost_for_good:
        evidence.insert(
            0,
            Evidence(
                code="E_PORT_LOST",
                message=f"serial port {port.port} disappeared and did not come back within "
                f"{port.wait_s:g} s (unplugged, or the board re-enumerated under another name)",
                objects=[port.port],
                magnitudes=[Magnitude(name="waited", value=port.wait_s, unit="s")],
            ),
        )
    elif not port.captured and not outcome.ok:
        evidence.insert(
            0,
            Evidence(
                code="E_BOARD_SILENT",
                message=f"the board printed nothing on {port.port} at {port.baud} baud in "
                f"{request.timeout_s:g} s: check the baud rate, that the console UART is the one wired "
                "to this port, and that the image started (reset the board)",
                objects=[port.port],
                magnitudes=[Magnitude(name="waited", value=round(outcome.elapsed_s, 3), unit="s")],
            ),
        )
    return RunResult(
        backend=backend,
        ok=outcome.ok and not port.lost_for_good,
        verdicts=outcome.verdicts(),
        evidence=evidence,
        output=outcome.transcript,
        log=log,
        duration_s=time.monotonic() - started,
    )


@register_backend
class SerialRunner(Backend):
    """Judge an already-running board's console (flashing is the flasher's job; see ``hil.board``)."""

    name = "serial"
    capabilities = frozenset({Capability.RUN})
    description = "board console over a serial port (pyserial)"
    hardware = True

    def requirements(self) -> list[Requirement]:
        return [package_requirement("pyserial", "serial", "pip install pyserial")]

    def console(self, port: str, baud: int, wait_s: float) -> SerialPort:
        """A board's console port (opened by the caller): every use of a board's port goes through here, so
        the serial backend is the one place a port is reached from (its callers passed the consent gate)."""
        return SerialPort(port, baud, wait_s)

    def run(self, request: RunRequest) -> RunResult:
        started = time.monotonic()
        if request.port is None:
            return RunResult(
                backend=self.name,
                ok=False,
                evidence=[Evidence(code="E_PORT_MISSING", message="no serial port given for the serial runner")],
            )
        port = self.console(request.port, request.baud, request.port_wait_s)
        try:
            port.open()
        except PortError as exc:
            return RunResult(
                backend=self.name, ok=False, evidence=[exc.evidence], duration_s=time.monotonic() - started
            )
        try:
            return judge_console(port, request, self.name, started)
        finally:
            port.close()
