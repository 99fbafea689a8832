"""The debug-probe flasher: pyOCD's Python API, with a target match before anything is written.

Nothing is flashed without an explicit match between the plan's target and the hardware, checked at
two levels before the first erase: the probe's own board record (an ST-LINK on a NUCLEO-H743ZI says
``stm32h743zitx``) must name the plan's chip family, and after connecting, the silicon's ID register
(STM32 ``DBGMCU_IDCODE.DEV_ID``, nRF ``FICR.INFO.PART``) must read the value of the plan's chip.

Which pyOCD target and ID register belong to a rac-fw target are facts of its pack
(``board.pyocd_target``, ``Target.debug``): pyOCD ships built-in targets for the nRF52840 and
STM32H743 but not the STM32F407, which needs the ``Keil.STM32F4xx_DFP`` CMSIS pack
(``Target.debug.pyocd_pack``; ``pyocd pack install stm32f407vg``); a pack already in
cmsis-pack-manager's cache, or a ``.pack`` file named in the bench file, is used as is.

After programming, every loadable segment of the image that lands in flash is read back and compared
(``verify``); a probe unplugged mid-flash becomes evidence that the flash contents are undefined.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rac_fw.contract import Evidence, Magnitude, Relaxation
from rac_fw.domains.firmware.backends.base import (
    Backend,
    Capability,
    FlashRequest,
    FlashResult,
    Requirement,
    package_requirement,
    register_backend,
)

INSTALL_PYOCD = "pip install 'pyocd>=0.36'"


@dataclass(frozen=True)
class ChipId:
    """A register that identifies the silicon: ``read32(address) & mask == value``."""

    register: str
    address: int
    mask: int
    value: int


@dataclass(frozen=True)
class PyocdTarget:
    """How pyOCD knows a rac-fw target."""

    part_prefix: str
    """Normalised pyOCD target-name prefix of the chip (``stm32h743`` matches ``stm32h743zitx``)."""
    builtin: str | None
    """pyOCD's built-in target name, or None when only a CMSIS pack provides the chip."""
    chip_id: ChipId
    pack: str | None = None
    """CMSIS pack providing the chip when there is no built-in target."""
    pack_part: str | None = None
    """Part pattern to give ``pyocd pack install`` for that pack."""
    pack_target: str | None = None
    """pyOCD target name of the board's exact part in that pack (``--pack FILE`` sessions use it)."""


def pyocd_spec(plan_target: str) -> PyocdTarget | None:
    """How pyOCD knows rac-fw target ``plan_target``, from its fact pack (None: no pyOCD support)."""
    from rac_fw.domains.firmware.facts.load import UnknownTarget, load_target

    try:
        target = load_target(plan_target)
    except UnknownTarget:
        return None
    debug = target.debug
    name = target.board.pyocd_target
    if not name or debug is None:
        return None
    chip = debug.chip_id
    pack = debug.pyocd_pack
    return PyocdTarget(
        part_prefix=debug.part_prefix,
        builtin=None if pack else name,
        chip_id=ChipId(chip.register, chip.address, chip.mask, chip.value),
        pack=pack,
        pack_part=debug.pyocd_pack_part,
        pack_target=name if pack else None,
    )


@cache
def pyocd_specs() -> dict[str, PyocdTarget]:
    """Every rac-fw target whose pack names a pyOCD target, by id (loads each pack once)."""
    from rac_fw.domains.firmware.facts.load import target_ids

    return {t: spec for t in target_ids() if (spec := pyocd_spec(t)) is not None}

ERASE_POLICIES = ("chip", "sector", "auto")


def normalise(name: str) -> str:
    """pyOCD's own comparison form for target names: lower case, no ``-``/``_``."""
    return name.lower().replace("-", "").replace("_", "")


def target_matches(plan_target: str, pyocd_name: str) -> bool:
    """True when pyOCD target ``pyocd_name`` is the chip of rac-fw target ``plan_target``.

    A board record or pack part names a specific package (``stm32f407vgtx``); the plan names the chip
    (``stm32f407``). Any other chip — even a close relative like ``stm32f405`` — does not match.
    """
    spec = pyocd_spec(plan_target)
    return spec is not None and normalise(pyocd_name).startswith(spec.part_prefix)


def chip_id_matches(plan_target: str, value: int) -> bool:
    """True when the ID register value read from the silicon is the plan target's chip."""
    spec = pyocd_spec(plan_target)
    return spec is not None and (value & spec.chip_id.mask) == spec.chip_id.value


def installed_pack_parts() -> list[str]:
    """Part numbers of every device in CMSIS packs cmsis-pack-manager has cached (no network)."""
    try:
        from pyocd.target.pack.pack_target import ManagedPacks
    except ImportError:
        return []
    return [dev.part_number for dev in ManagedPacks.get_installed_targets()]


def resolve_pyocd_target(plan_target: str, pack: Path | None = None) -> tuple[str | None, Evidence | None]:
    """The pyOCD target name to open a session with, or evidence saying how to get one."""
    spec = pyocd_spec(plan_target)
    if spec is None:
        return None, Evidence(
            code="E_BACKEND_UNSUPPORTED",
            message=f"pyOCD cannot flash target {plan_target!r}; pyOCD targets: {', '.join(pyocd_specs())}",
            objects=[plan_target],
        )
    if spec.builtin is not None:
        return spec.builtin, None
    if pack is not None and spec.pack_target is not None:
        return spec.pack_target, None
    cached = [p for p in installed_pack_parts() if target_matches(plan_target, p)]
    if cached:
        return normalise(sorted(cached)[0]), None
    return None, Evidence(
        code="E_TOOL_MISSING",
        message=f"pyOCD has no built-in {plan_target} target and no {spec.pack} CMSIS pack is in its cache: "
        f"run `pyocd pack install {spec.pack_part}`",
        objects=[plan_target, str(spec.pack)],
        relaxations=[Relaxation(description=f"or name a downloaded {spec.pack} .pack file as `pack:` in the bench")],
    )


def image_regions(image: Path) -> list[tuple[int, bytes]]:
    """(load address, bytes) of each loadable part of an ELF or Intel HEX image, for read-back."""
    if image.suffix.lower() == ".hex":
        from intelhex import IntelHex

        hexfile = IntelHex(str(image))
        return [(start, bytes(hexfile.tobinarray(start=start, end=end - 1))) for start, end in hexfile.segments()]
    from elftools.elf.elffile import ELFFile

    with image.open("rb") as handle:
        elf = ELFFile(handle)
        return [
            (seg["p_paddr"], seg.data()[: seg["p_filesz"]])
            for seg in elf.iter_segments()
            if seg["p_type"] == "PT_LOAD" and seg["p_filesz"] > 0
        ]


def _error(code: str, message: str, *objects: str, relax: str | None = None) -> Evidence:
    return Evidence(
        code=code,
        message=message,
        objects=list(objects),
        relaxations=[Relaxation(description=relax)] if relax else [],
    )


@register_backend
class PyocdBackend(Backend):
    name = "pyocd"
    capabilities = frozenset({Capability.FLASH})
    frameworks = frozenset({"zephyr", "hal", "baremetal"})
    description = "CMSIS-DAP / ST-LINK / J-Link probes through pyOCD's Python API, read-back verified"
    hardware = True

    def requirements(self) -> list[Requirement]:
        return [package_requirement("pyocd", "pyocd", INSTALL_PYOCD)]

    def supports(self, capability: Capability, framework: str | None = None, target: str | None = None) -> bool:
        """Only targets whose fact pack names a pyOCD target and a chip-ID register."""
        if not super().supports(capability, framework, target):
            return False
        return target is None or pyocd_spec(target) is not None

    def missing_for(self, framework: str | None = None, target: str | None = None) -> list[Evidence]:
        missing = self.missing()
        if target is not None and not missing:
            problem = resolve_pyocd_target(target)[1]
            if problem is not None:
                missing.append(problem)
        return missing

    def details(self) -> list[Requirement]:
        """Whether pyOCD can drive each rac-fw target here (built in, or from a cached pack)."""
        rows = []
        for plan_target, spec in pyocd_specs().items():
            name, missing = resolve_pyocd_target(plan_target)
            rows.append(
                Requirement(
                    name=f"pyOCD target {plan_target}",
                    present=name is not None,
                    install=f"pyocd pack install {spec.pack_part}" if spec.pack_part else INSTALL_PYOCD,
                    version=name,
                    location="built-in" if spec.builtin else (f"pack {spec.pack}" if name else None),
                    problem=f"needs the {spec.pack} CMSIS pack" if missing else "not found",
                )
            )
        return rows

    def probes(self) -> list[tuple[str, str, str | None]]:
        """Connected probes as (unique id, description, board target name or None); never blocks."""
        from pyocd.core.helpers import ConnectHelper

        rows = []
        for probe in ConnectHelper.get_all_connected_probes(blocking=False, print_wait_message=False):
            info = probe.associated_board_info
            rows.append((probe.unique_id, probe.description, info.target if info else None))
        return rows

    def flash(self, request: FlashRequest) -> FlashResult:
        """Match the target, program with the erase policy, read back, reset."""
        if request.erase not in ERASE_POLICIES:
            return self._fail(
                _error("E_INPUT", f"erase policy {request.erase!r} is not one of {', '.join(ERASE_POLICIES)}")
            )
        missing = self.missing()
        if missing:
            return FlashResult(backend=self.name, ok=False, evidence=missing)
        pyocd_target, problem = resolve_pyocd_target(request.target, request.pack)
        if problem is not None:
            return self._fail(problem)
        assert pyocd_target is not None
        probes = self.probes()
        chosen = [p for p in probes if request.probe is None or request.probe in p[0]]
        if not chosen:
            listed = ", ".join(f"{uid} ({desc})" for uid, desc, _ in probes) or "none"
            wanted = f"with UID {request.probe!r} " if request.probe else ""
            return self._fail(
                _error(
                    "E_PROBE_NOT_FOUND",
                    f"no debug probe {wanted}is connected; probes connected: {listed}",
                    *([request.probe] if request.probe else []),
                    relax="plug in the board's probe (and check `pyocd list`), or correct `probe:` in the bench",
                )
            )
        if len(chosen) > 1:
            return self._fail(
                _error(
                    "E_PROBE_AMBIGUOUS",
                    f"{len(chosen)} probes match; refusing to guess which board to flash: "
                    + ", ".join(f"{uid} ({desc})" for uid, desc, _ in chosen),
                    *[uid for uid, _, _ in chosen],
                    relax="pass --probe UID (or set `probe:` in the bench file)",
                )
            )
        uid, description, board_target = chosen[0]
        if board_target is not None and not target_matches(request.target, board_target):
            return self._fail(
                _error(
                    "E_TARGET_MISMATCH",
                    f"probe {uid} ({description}) is on a {board_target} board but the plan targets "
                    f"{request.target}; refusing to flash",
                    uid,
                    board_target,
                    request.target,
                )
            )
        return self._program(request, uid, pyocd_target)

    def _fail(self, evidence: Evidence) -> FlashResult:
        return FlashResult(backend=self.name, ok=False, evidence=[evidence])

    def _program(self, request: FlashRequest, uid: str, pyocd_target: str) -> FlashResult:
        from pyocd.core import exceptions
        from pyocd.core.helpers import ConnectHelper
        from pyocd.flash.file_programmer import FileProgrammer
        from rich.console import Console
        from rich.progress import Progress

        spec = pyocd_spec(request.target)
        if spec is None:
            return self._fail(_error("E_BACKEND_UNSUPPORTED", f"no pyOCD facts for {request.target}", request.target))
        options: dict[str, object] = {"target_override": pyocd_target, "hide_programming_progress": True}
        if request.pack is not None:
            options["pack"] = str(request.pack)
        done = 0.0
        started = time.monotonic()
        try:
            session = ConnectHelper.session_with_chosen_probe(
                blocking=False, unique_id=uid, options=options, auto_open=False
            )
            if session is None:
                return self._fail(_error("E_PROBE_NOT_FOUND", f"probe {uid} disappeared before connecting", uid))
            with session:
                target = session.board.target
                value = target.read32(spec.chip_id.address)
                if not chip_id_matches(request.target, value):
                    return self._fail(
                        _error(
                            "E_TARGET_MISMATCH",
                            f"{spec.chip_id.register} reads {value & spec.chip_id.mask:#x} but a "
                            f"{request.target} reads {spec.chip_id.value:#x}; refusing to flash",
                            uid,
                            request.target,
                        )
                    )
                # On stderr, so `--json` output on stdout stays machine-readable.
                with Progress(console=Console(stderr=True), transient=True) as bar:
                    task = bar.add_task(f"flashing {request.image.name} → {uid}", total=100)

                    def progress(fraction: float) -> None:
                        nonlocal done
                        done = fraction
                        bar.update(task, completed=fraction * 100)

                    FileProgrammer(session, progress=progress, chip_erase=request.erase).program(str(request.image))
                mismatches = self._verify(target, request.image) if request.verify else []
                target.reset()
        except (exceptions.ProbeError, exceptions.TransferError, OSError) as exc:
            return FlashResult(
                backend=self.name,
                ok=False,
                probe=uid,
                evidence=[
                    Evidence(
                        code="E_PROBE_LOST",
                        message=f"probe {uid} failed during flashing at {done * 100:.0f}% ({exc}); the flash "
                        "contents are undefined",
                        objects=[uid, request.target],
                        magnitudes=[
                            Magnitude(name="progress", value=round(done * 100), unit="%"),
                            Magnitude(name="elapsed", value=round(time.monotonic() - started, 1), unit="s"),
                        ],
                        relaxations=[Relaxation(description="reconnect the probe and flash again with --erase chip")],
                    )
                ],
            )
        size = sum(len(data) for _, data in image_regions(request.image))
        if mismatches:
            return FlashResult(
                backend=self.name,
                ok=False,
                probe=uid,
                target=pyocd_target,
                bytes_written=size,
                evidence=[
                    _error(
                        "E_FLASH_VERIFY",
                        "read-back differs from the image at " + ", ".join(f"{a:#010x}" for a in mismatches[:8]),
                        uid,
                        relax="flash again with --erase chip; if it persists the flash may be write-protected",
                    )
                ],
            )
        return FlashResult(
            backend=self.name, ok=True, probe=uid, target=pyocd_target, bytes_written=size, verified=request.verify
        )

    @staticmethod
    def _verify(target: object, image: Path) -> list[int]:
        """Addresses of the first differing byte of each flash segment that does not read back equal."""
        bad = []
        memory_map = target.memory_map  # type: ignore[attr-defined]
        for address, data in image_regions(image):
            region = memory_map.get_region_for_address(address)
            if region is None or not region.is_flash:
                continue
            back = bytes(target.read_memory_block8(address, len(data)))  # type: ignore[attr-defined]
            if back != data:
                bad.append(address + next(i for i, (a, b) in enumerate(zip(back, data, strict=True)) if a != b))
        return bad
