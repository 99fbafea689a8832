"""The ESP32 flasher: esptool writes the images an ESP-IDF build lists in ``flasher_args.json``.

The target match is done twice, before anything is written: the build's own record of its chip
(``flasher_args.json``) must be the plan target's chip, and esptool is run with ``--chip`` so it
refuses a board carrying another chip ("This chip is ESP32, not ESP32-S3"). esptool verifies every
region's MD5 after writing; the flash counts as verified only when it reports that for each image.
esptool runs as a subprocess (``python -m esptool``) so its v4 and v5 Python APIs need not be tracked.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.backends.base import (
    Backend,
    Capability,
    FlashRequest,
    FlashResult,
    Requirement,
    package_requirement,
    register_backend,
    run_command,
)

INSTALL_ESPTOOL = "pip install esptool"


def flasher_args(image: Path) -> Path | None:
    """The ``flasher_args.json`` of the build that produced ``image`` (an ELF/bin or the build dir)."""
    build_dir = image if image.is_dir() else image.parent
    candidate = build_dir / "flasher_args.json"
    return candidate if candidate.is_file() else None


def esptool_command(args_file: Path, chip: str, port: str, baud: int, erase: str) -> list[str]:
    """The ``write_flash`` command for every image the build lists, at its offset."""
    spec = json.loads(args_file.read_text(encoding="utf-8"))
    build_dir = args_file.parent
    extra = spec.get("extra_esptool_args", {})
    command = [sys.executable, "-m", "esptool", "--chip", chip, "-p", port, "-b", str(baud)]
    command += ["--before", extra.get("before", "default_reset"), "--after", extra.get("after", "hard_reset")]
    command += ["write_flash", *spec.get("write_flash_args", [])]
    if erase == "chip":
        command.append("--erase-all")
    for offset, rel in sorted(spec["flash_files"].items(), key=lambda item: int(item[0], 16)):
        command += [offset, str(build_dir / rel)]
    return command


@register_backend
class EsptoolBackend(Backend):
    name = "esptool"
    capabilities = frozenset({Capability.FLASH})
    frameworks = frozenset({"espidf"})
    description = "ESP32 serial flashing (esptool), MD5-verified"
    hardware = True

    def supports(self, capability: Capability, framework: str | None = None, target: str | None = None) -> bool:
        """Only targets whose board names an ESP-IDF chip (``board.idf_target``: esptool's ``--chip``)."""
        if not super().supports(capability, framework, target):
            return False
        if target is None:
            return True
        from rac_fw.domains.firmware.facts.load import load_target

        try:
            return load_target(target).board.idf_target is not None
        except LookupError:
            return False

    def requirements(self) -> list[Requirement]:
        return [package_requirement("esptool", "esptool", INSTALL_ESPTOOL)]

    def flash(self, request: FlashRequest) -> FlashResult:
        from rac_fw.domains.firmware.facts.load import load_target

        def refuse(code: str, message: str, *objects: str) -> FlashResult:
            return FlashResult(
                backend=self.name, ok=False, evidence=[Evidence(code=code, message=message, objects=list(objects))]
            )

        missing = self.missing()
        if missing:
            return FlashResult(backend=self.name, ok=False, evidence=missing)
        chip = load_target(request.target).board.idf_target
        if chip is None:
            return refuse("E_TARGET_MISMATCH", f"target {request.target!r} is not an ESP32 chip", request.target)
        args_file = flasher_args(request.image)
        if args_file is None:
            return refuse(
                "E_IMAGE",
                f"no flasher_args.json next to {request.image}: flash an ESP-IDF build directory",
                str(request.image),
            )
        built_for = json.loads(args_file.read_text(encoding="utf-8")).get("extra_esptool_args", {}).get("chip")
        if built_for != chip:
            return refuse(
                "E_TARGET_MISMATCH",
                f"image was built for chip {built_for!r} but the plan targets {chip!r}; refusing to flash",
                str(built_for),
                chip,
            )
        absent = [
            rel
            for rel in json.loads(args_file.read_text(encoding="utf-8"))["flash_files"].values()
            if not (args_file.parent / rel).is_file()
        ]
        if absent:
            return refuse("E_IMAGE", f"the build lists images that are not there: {', '.join(absent)}", *absent)
        if request.port is None:
            return refuse("E_PORT_MISSING", "esptool needs the board's serial port (bench `serial:`)")
        command = esptool_command(args_file, chip, request.port, request.baud or 460800, request.erase)
        outcome = run_command(command, args_file.parent / "esptool.log", request.timeout_s)
        log = outcome.log.read_text(encoding="utf-8", errors="replace")
        wrong_chip = re.search(r"This chip is (\S+),? not (\S+)", log)
        if wrong_chip:
            return refuse(
                "E_TARGET_MISMATCH",
                f"the board on {request.port} carries {wrong_chip.group(1)}, not {wrong_chip.group(2)}; "
                "nothing was written",
                request.port,
            )
        if "Failed to connect" in log:
            return refuse(
                "E_BOARD_NOT_RESPONDING",
                f"no {chip} bootloader answered on {request.port} (log: {outcome.log}); nothing was written: "
                "hold BOOT while pressing RESET to enter the ROM bootloader, or check `serial:`",
                request.port,
            )
        images = len(json.loads(args_file.read_text(encoding="utf-8"))["flash_files"])
        verified = log.count("Hash of data verified") >= images
        if not outcome.ok:
            return FlashResult(
                backend=self.name, ok=False, target=chip, evidence=[outcome.evidence(self.name, "flash")]
            )
        return FlashResult(backend=self.name, ok=verified, target=chip, verified=verified)
