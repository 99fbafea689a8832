"""The ``gcc`` builder: compile and link a bare-metal tree with arm-none-eabi-gcc, warnings as errors.

The tree says how to build itself (``build.json``: sources, flags, linker script); this builder runs
one compiler process for compile + link, reports flash/RAM use per memory region of the target, and
turns the linker's own diagnostics (region overflow, orphan section) into evidence with magnitudes.

Builds are cached by the hash of every input file of the tree (which is a pure function of the plan,
the target facts and the templates) plus the toolchain version: an unchanged plan is a copy of the
cached ELF, without starting the compiler.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from rac_fw.contract import Evidence, Magnitude, Relaxation
from rac_fw.domains.firmware.backends.base import (
    Backend,
    BuildRequest,
    BuildResult,
    Capability,
    Requirement,
    register_backend,
    run_command,
    tool_requirement,
)
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.model import Target

COMPILER = "arm-none-eabi-gcc"
INSTALL = "sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi"
#: Files of the tree that are build inputs (everything the compiler or linker reads).
INPUT_GLOBS = ("build.json", "link.ld", "include/**/*", "src/**/*")
_OVERFLOW = re.compile(r"region `(?P<region>[^']+)' overflowed by (?P<bytes>\d+) bytes")
_ORPHAN = re.compile(r"unplaced orphan section `(?P<section>[^']+)' from `(?P<object>[^']+)'")


@dataclass(frozen=True)
class RegionUse:
    """Bytes an image occupies in one memory region (load images count in flash, run images in RAM)."""

    region: str
    kind: str
    used: int
    size: int

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.size if self.size else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "region": self.region,
            "kind": self.kind,
            "used": self.used,
            "size": self.size,
            "percent": round(self.percent, 2),
        }


@dataclass
class GccBuildResult(BuildResult):
    """A ``BuildResult`` plus the per-region memory use and whether the cache answered."""

    regions: list[RegionUse] = field(default_factory=list)
    cached: bool = False
    cache_key: str = ""


def cache_root() -> Path:
    """``$RAC_FW_CACHE``, else ``$XDG_CACHE_HOME/rac-fw`` or ``~/.cache/rac-fw`` (plus ``/gcc``)."""
    base = os.environ.get("RAC_FW_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "rac-fw"
    )
    return Path(base) / "gcc"


@cache
def _toolchain_version(path: str, mtime_ns: int) -> str:
    """``arm-none-eabi-gcc --version`` first line, once per binary (keyed by its mtime)."""
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return (out.stdout.splitlines() or ["unknown"])[0]


def toolchain_version() -> str | None:
    path = shutil.which(COMPILER)
    if path is None:
        return None
    return _toolchain_version(path, os.stat(path).st_mtime_ns)


def _inputs(source_dir: Path) -> list[Path]:
    found = {p for pattern in INPUT_GLOBS for p in source_dir.glob(pattern) if p.is_file()}
    return sorted(found)


def cache_key(source_dir: Path, version: str) -> str:
    """sha256 over (relative path, bytes) of every input file plus the toolchain version."""
    digest = hashlib.sha256(version.encode())
    for path in _inputs(source_dir):
        digest.update(path.relative_to(source_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def region_use(image: Path, target: Target) -> list[RegionUse]:
    """Per-region use from the ELF: allocated sections at their run address, loaded data at its LMA."""
    used: dict[str, int] = {}
    with open(image, "rb") as handle:
        elf = ELFFile(handle)
        loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        for section in elf.iter_sections():
            if not section["sh_flags"] & SH_FLAGS.SHF_ALLOC or section["sh_size"] == 0:
                continue
            addresses = {section["sh_addr"]}
            if section["sh_type"] != "SHT_NOBITS":
                for seg in loads:
                    if seg["p_vaddr"] <= section["sh_addr"] < seg["p_vaddr"] + seg["p_memsz"]:
                        addresses.add(seg["p_paddr"] + section["sh_addr"] - seg["p_vaddr"])
            for address in addresses:
                region = target.region_at(address)
                if region is not None:
                    used[region.name] = used.get(region.name, 0) + section["sh_size"]
    return [RegionUse(r.name, r.kind, used.get(r.name, 0), r.size) for r in target.memory if r.name in used]


def _linker_evidence(log_text: str, target: Target) -> list[Evidence]:
    """Specific evidence for the linker failures the bare-metal script is designed to provoke."""
    evidence: list[Evidence] = []
    for match in _OVERFLOW.finditer(log_text):
        region = target.region(match["region"])
        evidence.append(
            Evidence(
                code="E_REGION_OVERFLOW",
                message=f"the image does not fit {match['region']}: overflowed by {match['bytes']} bytes"
                + (f" (region is {region.size} bytes)" if region else ""),
                objects=[match["region"]],
                magnitudes=[Magnitude(name="overflow", value=int(match["bytes"]), unit="bytes")],
                relaxations=[
                    Relaxation(
                        description=f"shrink buffers, stack_bytes or heap_bytes placed in "
                        f"{match['region']} by {match['bytes']} bytes"
                    )
                ],
            )
        )
    for match in _ORPHAN.finditer(log_text):
        evidence.append(
            Evidence(
                code="E_ORPHAN_SECTION",
                message=f"section {match['section']} (from {Path(match['object']).name}) is named by no rule of "
                "the linker script; with --orphan-handling=error it fails the link instead of landing in "
                "an arbitrary region",
                objects=[match["section"], Path(match["object"]).name],
            )
        )
    return evidence


@register_backend
class GccBuilder(Backend):
    """arm-none-eabi-gcc for the ``baremetal`` framework (one compile+link process, cached)."""

    name = "gcc"
    capabilities = frozenset({Capability.BUILD})
    frameworks = frozenset({"baremetal"})
    description = "arm-none-eabi-gcc bare-metal build (-Werror, --orphan-handling=error, cached)"

    def requirements(self) -> list[Requirement]:
        return [tool_requirement(COMPILER, INSTALL)]

    def build(self, request: BuildRequest) -> GccBuildResult:
        source_dir, build_dir = Path(request.source_dir), Path(request.build_dir)
        build_dir.mkdir(parents=True, exist_ok=True)
        log = build_dir / "build.log"
        version = toolchain_version()
        if version is None:
            return GccBuildResult(self.name, False, build_dir, log=None, evidence=self.missing())
        config_path = source_dir / "build.json"
        if not config_path.is_file():
            return GccBuildResult(
                self.name, False, build_dir,
                evidence=[Evidence(code="E_BUILD_CONFIG", message=f"{config_path} is missing: lower the plan "
                                   "with --framework baremetal first", location=str(config_path))],
            )  # fmt: skip
        config = json.loads(config_path.read_text(encoding="utf-8"))
        target = load_target(request.target)
        image = build_dir / str(config["image"])
        key = cache_key(source_dir, version)
        cached = cache_root() / key
        command = self._command(config, source_dir, build_dir, image)
        if (cached / image.name).is_file():
            shutil.copyfile(cached / image.name, image)
            regions = [RegionUse(**r) for r in json.loads((cached / "memory.json").read_text())]
            return GccBuildResult(self.name, True, build_dir, command, image, None, [], regions, True, key)
        outcome = run_command(command, log, request.timeout_s, cwd=source_dir)
        if not outcome.ok:
            text = log.read_text(encoding="utf-8", errors="replace")
            evidence = _linker_evidence(text, target) + [outcome.evidence(self.name, "build")]
            return GccBuildResult(self.name, False, build_dir, command, None, log, evidence, cache_key=key)
        regions = region_use(image, target)
        memory = [{k: v for k, v in r.as_dict().items() if k != "percent"} for r in regions]
        (build_dir / "memory.json").write_text(json.dumps([r.as_dict() for r in regions], indent=2) + "\n")
        # memory.json first, the ELF last and atomically: a reader seeing the ELF sees a complete entry.
        cached.mkdir(parents=True, exist_ok=True)
        (cached / "memory.json").write_text(json.dumps(memory))
        partial = cached / f"{image.name}.{os.getpid()}.partial"
        shutil.copyfile(image, partial)
        os.replace(partial, cached / image.name)
        return GccBuildResult(self.name, True, build_dir, command, image, log, [], regions, False, key)

    @staticmethod
    def _command(config: dict[str, Any], source_dir: Path, build_dir: Path, image: Path) -> list[str]:
        compiler = shutil.which(COMPILER) or COMPILER
        return [
            compiler,
            *config["cflags"],
            *config["sources"],
            "-T", str(config["linker_script"]),
            *config["ldflags"],
            f"-Wl,-Map={build_dir.resolve() / 'firmware.map'}",
            "-o", str(image.resolve()),
            *config["libs"],
        ]  # fmt: skip
