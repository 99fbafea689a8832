"""Instrumented hardware backends for the consent tests: real subclasses of the pyOCD, esptool and serial
backends, registered under their own names, that append every call which would touch a board (open its
console port, enumerate probes, program it) to the JSON-lines file ``$RAC_FW_HW_LOG`` and then do what
the real backend does. Importing the module registers them (``-p hardware_recorder`` in a pytest
subprocess, an ``import`` before the CLI in a server subprocess); :func:`install` does it in process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rac_fw.domains.firmware.backends import backends
from rac_fw.domains.firmware.backends.base import BACKENDS, FlashRequest, FlashResult, register_backend
from rac_fw.domains.firmware.backends.esptool import EsptoolBackend
from rac_fw.domains.firmware.backends.pyocd import PyocdBackend
from rac_fw.domains.firmware.backends.serial import SerialPort, SerialRunner

LOG = "RAC_FW_HW_LOG"


def record(call: str, **detail: Any) -> None:
    with Path(os.environ[LOG]).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"call": call, **{k: str(v) for k, v in detail.items()}}) + "\n")


def calls(log: Path) -> list[dict[str, str]]:
    """The calls recorded in ``log`` (none when it was never written)."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class RecordingPyocd(PyocdBackend):
    def probes(self) -> list[tuple[str, str, str | None]]:
        record("pyocd.probes")
        return super().probes()

    def flash(self, request: FlashRequest) -> FlashResult:
        record("pyocd.flash", image=request.image, target=request.target)
        return super().flash(request)


class RecordingEsptool(EsptoolBackend):
    def flash(self, request: FlashRequest) -> FlashResult:
        record("esptool.flash", image=request.image, target=request.target, port=request.port)
        return super().flash(request)


class RecordingSerial(SerialRunner):
    def console(self, port: str, baud: int, wait_s: float) -> SerialPort:
        record("serial.console", port=port, baud=baud)
        return super().console(port, baud, wait_s)


RECORDERS = (RecordingPyocd, RecordingEsptool, RecordingSerial)


def install() -> dict[str, Any]:
    """Register the recorders (after the real backends were discovered, so these win); returns what they
    replaced, for :func:`uninstall`."""
    backends()
    replaced = {cls.name: BACKENDS[cls.name] for cls in RECORDERS}
    for cls in RECORDERS:
        register_backend(cls)
    return replaced


def uninstall(replaced: dict[str, Any]) -> None:
    BACKENDS.update(replaced)


if os.environ.get(LOG):  # imported into a subprocess: record there
    install()
