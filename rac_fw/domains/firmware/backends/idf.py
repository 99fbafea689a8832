"""The ESP-IDF builder: ``idf.py set-target`` then ``idf.py build`` on the generated project.

ESP-IDF is found through ``$IDF_PATH`` (set by ``export.sh``) and ``idf.py`` on PATH; both come from
the same install step. ``set-target`` runs first on every build because a build directory configured
for another chip silently produces the wrong image otherwise; it is cheap when the target is unchanged.
The linked ELF is read from ``project_description.json`` (its ``app_elf``), which names the project.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.backends.base import (
    Backend,
    BuildRequest,
    BuildResult,
    Capability,
    Requirement,
    register_backend,
    run_command,
)

#: The ESP-IDF release the templates are written for (the install step clones its branch).
IDF_VERSION = "v5.5"

INSTALL_IDF = (
    f"git clone -b {IDF_VERSION} --recursive https://github.com/espressif/esp-idf.git ~/esp/esp-idf && "
    "~/esp/esp-idf/install.sh esp32s3 && . ~/esp/esp-idf/export.sh"
)


def idf_version(idf_path: Path) -> str | None:
    """``MAJOR.MINOR.PATCH`` from ``tools/cmake/version.cmake`` of an ESP-IDF checkout."""
    version_file = idf_path / "tools" / "cmake" / "version.cmake"
    if not version_file.is_file():
        return None
    parts: dict[str, str] = {}
    for line in version_file.read_text(encoding="utf-8").splitlines():
        for key in ("MAJOR", "MINOR", "PATCH"):
            marker = f"IDF_VERSION_{key} "
            if marker in line:
                parts[key] = line.split(marker, 1)[1].strip(" )")
    return ".".join(parts.get(k, "?") for k in ("MAJOR", "MINOR", "PATCH"))


@register_backend
class IdfBackend(Backend):
    name = "idf"
    capabilities = frozenset({Capability.BUILD})
    frameworks = frozenset({"espidf"})
    description = f"ESP-IDF {IDF_VERSION} build (`idf.py set-target` + `idf.py build`)"

    def requirements(self) -> list[Requirement]:
        env = os.environ.get("IDF_PATH")
        path = Path(env).expanduser() if env else None
        checkout = path is not None and (path / "tools" / "idf.py").is_file()
        idf_py = shutil.which("idf.py")
        return [
            Requirement(
                name="ESP-IDF (IDF_PATH)",
                present=checkout,
                install=INSTALL_IDF,
                version=idf_version(path) if checkout and path else None,
                location=str(path) if checkout else None,
                problem="not found" if env is None else f"not an ESP-IDF checkout at {env}",
            ),
            Requirement(
                name="idf.py",
                present=idf_py is not None,
                install=". $IDF_PATH/export.sh" if checkout else INSTALL_IDF,
                location=idf_py,
                problem="not on PATH",
            ),
        ]

    def idf_target(self, target: str) -> str:
        from rac_fw.domains.firmware.facts.load import load_target

        chip = load_target(target).board.idf_target
        if chip is None:
            raise ValueError(f"target {target!r} is not an ESP-IDF chip")
        return chip

    def commands(self, request: BuildRequest, chip: str) -> list[list[str]]:
        """``set-target`` then ``build``, both on the same source and build directories."""
        base = ["idf.py", "-C", str(request.source_dir), "-B", str(request.build_dir)]
        return [[*base, "set-target", chip], [*base, "build"]]

    def build(self, request: BuildRequest) -> BuildResult:
        try:
            chip = self.idf_target(request.target)
        except ValueError as exc:
            return BuildResult(
                backend=self.name,
                ok=False,
                build_dir=request.build_dir,
                evidence=[Evidence(code="E_BACKEND_UNSUPPORTED", message=str(exc), objects=[request.target])],
            )
        commands = self.commands(request, chip)
        missing = self.missing()
        if missing:
            return BuildResult(
                backend=self.name, ok=False, build_dir=request.build_dir, command=commands[-1], evidence=missing
            )
        log_dir = request.build_dir.parent
        for step, command in zip(("set-target", "build"), commands, strict=True):
            outcome = run_command(command, log_dir / f"{request.build_dir.name}.idf-{step}.log", request.timeout_s)
            if not outcome.ok:
                return BuildResult(
                    backend=self.name,
                    ok=False,
                    build_dir=request.build_dir,
                    command=command,
                    log=outcome.log,
                    evidence=[outcome.evidence(self.name, "build")],
                )
        elf = self.app_elf(request.build_dir)
        return BuildResult(
            backend=self.name,
            ok=elf is not None,
            build_dir=request.build_dir,
            command=commands[-1],
            image=elf,
            log=outcome.log,
        )

    @staticmethod
    def app_elf(build_dir: Path) -> Path | None:
        """The application ELF named by ``project_description.json``."""
        description = build_dir / "project_description.json"
        if not description.is_file():
            return None
        name = json.loads(description.read_text(encoding="utf-8")).get("app_elf")
        elf = build_dir / str(name)
        return elf if name and elf.is_file() else None
