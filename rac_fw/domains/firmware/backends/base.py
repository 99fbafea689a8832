"""The backend base class: one small abstract class per build/flash/run tool, in the style of west's runners.

A backend has a ``name``, the ``capabilities`` it offers (build, flash, run, debug), the ``frameworks``
it can compile and the ``targets`` it can drive. It reports what it needs as ``Requirement`` rows
(present or not, version, the exact install step), so ``rac-fw doctor`` and the "missing tool" evidence
come from the same place. Subclasses register with ``@register_backend`` and implement only the
operations they declare; calling any other raises ``UnsupportedOperation``.

Every external command runs through ``run_command``: bounded by a timeout, output kept in a log file,
so a hung SDK becomes evidence ("timed out after 600 s, see build.log") instead of a stuck CI job.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import ClassVar, TypeVar

from rac_fw.contract import Evidence, Verdict


class Capability(StrEnum):
    """What a backend can do with an artifact."""

    BUILD = "build"
    FLASH = "flash"
    RUN = "run"
    DEBUG = "debug"


@dataclass(frozen=True)
class Requirement:
    """One thing a backend needs: a tool on PATH, an SDK checkout, a Python package, a CMSIS pack.

    ``install`` is the exact step a user runs to get it; it ends up verbatim in the missing-tool
    evidence, so it must be copy-pasteable.
    """

    name: str
    present: bool
    install: str
    version: str | None = None
    location: str | None = None
    """Where it was found (a path, an environment variable's value), or None when absent."""
    problem: str = "not found"
    """What is wrong when absent, phrased to follow ``name`` ("not found", "has no espressif32 platform")."""

    def evidence(self, backend: str) -> Evidence:
        """The repair evidence for this requirement when it is absent."""
        return Evidence(
            code="E_TOOL_MISSING",
            message=f"{self.name} {self.problem}: run `{self.install}`",
            location=f"backend:{backend}",
            objects=[backend] if self.name == backend else [backend, self.name],
        )


@dataclass(frozen=True)
class BuildRequest:
    """Build the generated source tree in ``source_dir`` for rac-fw target ``target``."""

    source_dir: Path
    target: str
    framework: str
    build_dir: Path
    board: str | None = None
    """Overrides the builder's board name (e.g. ``native_sim/native/64`` for CI compile checks)."""
    timeout_s: float = 900.0
    sdk_version: str | None = None
    """The framework release the artifact was written for (its manifest's ``sdk_version``), which a builder
    with a versioned workspace (west) compares with the workspace's."""


@dataclass
class BuildResult:
    """What a build produced: the image to flash/run, the command line, and the log."""

    backend: str
    ok: bool
    build_dir: Path
    command: list[str] = field(default_factory=list)
    image: Path | None = None
    """The linked ELF (runners and the ELF verifier read it)."""
    log: Path | None = None
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class FlashRequest:
    """Write ``image`` to a board whose chip must be rac-fw target ``target``.

    ``erase`` is ``chip`` (whole flash), ``sector`` (only the sectors the image touches) or ``auto``
    (the programmer's choice, usually sector). ``probe`` is a probe unique ID; None means "the only one
    connected" — with several connected, flashing is refused rather than guessed.
    """

    image: Path
    target: str
    probe: str | None = None
    erase: str = "auto"
    verify: bool = True
    port: str | None = None
    """Serial port, for flashers that talk over one (esptool)."""
    baud: int | None = None
    pack: Path | None = None
    """A CMSIS ``.pack`` file providing the chip, for flashers that read packs (pyOCD)."""
    timeout_s: float = 120.0


@dataclass
class FlashResult:
    backend: str
    ok: bool
    probe: str | None = None
    target: str | None = None
    """The target name the probe session reported (pyOCD's name), for the record."""
    bytes_written: int = 0
    verified: bool = False
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class RunRequest:
    """Run ``image`` and judge its console against ordered ``expect`` regexes within ``timeout_s``.

    The captured console goes to ``output_dir/console.log`` so the verdicts can be re-checked later.
    ``port``/``baud`` are for runners that read a board's serial console.
    """

    image: Path | None
    target: str
    expect: tuple[str, ...]
    timeout_s: float
    output_dir: Path
    forbid: tuple[str, ...] = ()
    """Regexes that fail the run at once (``HardFault``, ``panic``)."""
    exit_status: int = 0
    """The exit status the run must end with where the runner sees one (a behaviour's ``exit: N`` ends a QEMU
    run through semihosting with status 1)."""
    port: str | None = None
    baud: int = 115200
    port_wait_s: float = 5.0
    """How long a serial runner waits for the port to (re)appear, e.g. after USB re-enumeration."""


@dataclass
class RunResult:
    backend: str
    ok: bool
    verdicts: list[Verdict] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    output: str = ""
    log: Path | None = None
    duration_s: float = 0.0


class UnsupportedOperation(RuntimeError):
    """Raised when a backend is asked for an operation it does not declare."""


class Backend(ABC):
    """A build/flash/run tool. Subclasses set the class attributes and implement what they declare."""

    name: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]]
    frameworks: ClassVar[frozenset[str]] = frozenset()
    """Frameworks a builder compiles (``zephyr``, ``espidf``, ``hal``, ``baremetal``)."""
    targets: ClassVar[frozenset[str]] = frozenset()
    """rac-fw target ids this backend drives; empty means "any target of its frameworks"."""
    description: ClassVar[str] = ""

    @abstractmethod
    def requirements(self) -> list[Requirement]:
        """Every tool/SDK this backend needs, each probed on this machine now."""

    def missing(self) -> list[Evidence]:
        """Evidence for each absent requirement; empty when the backend can be used here."""
        return [req.evidence(self.name) for req in self.requirements() if not req.present]

    def available(self) -> bool:
        return not self.missing()

    def details(self) -> list[Requirement]:
        """What only some targets need (an SDK, a platform, a CMSIS pack), listed by ``rac-fw doctor``."""
        return []

    def missing_for(self, framework: str | None = None, target: str | None = None) -> list[Evidence]:
        """``missing()`` plus what one framework/target needs beyond it (an SDK, a platform, a pack)."""
        return self.missing()

    def supports(self, capability: Capability, framework: str | None = None, target: str | None = None) -> bool:
        """True when this backend declares ``capability`` for that framework and target."""
        if capability not in self.capabilities:
            return False
        if framework is not None and self.frameworks and framework not in self.frameworks:
            return False
        return target is None or not self.targets or target in self.targets

    def build(self, request: BuildRequest) -> BuildResult:
        raise UnsupportedOperation(f"backend {self.name!r} cannot build")

    def flash(self, request: FlashRequest) -> FlashResult:
        raise UnsupportedOperation(f"backend {self.name!r} cannot flash")

    def run(self, request: RunRequest) -> RunResult:
        raise UnsupportedOperation(f"backend {self.name!r} cannot run")


B = TypeVar("B", bound=type[Backend])

#: name → backend class; filled by ``@register_backend`` (read it through ``backends.backends()``).
BACKENDS: dict[str, type[Backend]] = {}


def register_backend(cls: B) -> B:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    BACKENDS[cls.name] = cls
    return cls


# --- probing and running external tools ---------------------------------------------------------


def tool_version(argv: list[str], timeout_s: float = 10.0) -> str | None:
    """First non-empty line a tool prints for its version query, or None if it fails or hangs."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0].strip() if text else None


def tool_requirement(tool: str, install: str, version_args: tuple[str, ...] = ("--version",)) -> Requirement:
    """A requirement for an executable on PATH, with its version when present."""
    path = shutil.which(tool)
    if path is None:
        return Requirement(name=tool, present=False, install=install)
    return Requirement(
        name=tool, present=True, install=install, version=tool_version([path, *version_args]), location=path
    )


def package_requirement(name: str, module: str, install: str) -> Requirement:
    """A requirement for an importable Python package (imported here, so only when asked)."""
    try:
        imported = importlib.import_module(module)
    except ImportError:
        return Requirement(name=name, present=False, install=install)
    return Requirement(
        name=name,
        present=True,
        install=install,
        version=getattr(imported, "__version__", None),
        location=str(Path(str(imported.__file__)).parent),
    )


@dataclass
class CommandOutcome:
    """How an external command ended: its exit status (None on timeout), duration and log tail."""

    command: list[str]
    returncode: int | None
    duration_s: float
    log: Path
    tail: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def evidence(self, backend: str, what: str) -> Evidence:
        """Failure evidence naming the command, how it ended and the end of its log."""
        how = (
            f"timed out after {self.duration_s:.0f} s"
            if self.returncode is None
            else f"exited with status {self.returncode}"
        )
        return Evidence(
            code="E_BUILD_FAILED" if what == "build" else f"E_{what.upper()}_FAILED",
            message=f"{backend} {what} {how} (log: {self.log})\n{self.tail}".rstrip(),
            location=str(self.log),
            objects=[backend, " ".join(self.command)],
        )


def run_command(
    command: list[str],
    log: Path,
    timeout_s: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    tail_lines: int = 25,
) -> CommandOutcome:
    """Run ``command`` with stdout+stderr into ``log``; kill its process group on timeout."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    full_env = {**os.environ, **(env or {})}
    with log.open("w", encoding="utf-8", errors="replace") as sink:
        sink.write("$ " + " ".join(command) + "\n")
        sink.flush()
        try:
            proc = subprocess.Popen(
                command, cwd=cwd, env=full_env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
            )
        except OSError as exc:
            sink.write(f"cannot start: {exc}\n")
            returncode: int | None = 127
        else:
            try:
                returncode = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                returncode = None
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return CommandOutcome(
        command=command,
        returncode=returncode,
        duration_s=time.monotonic() - started,
        log=log,
        tail="\n".join(lines[-tail_lines:]),
    )
