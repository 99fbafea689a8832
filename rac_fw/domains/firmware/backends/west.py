"""The Zephyr builder: ``west build`` of the generated app inside a Zephyr workspace.

The workspace is ``$ZEPHYR_BASE`` when set (its parent is the west top directory), else whatever
``west topdir`` finds from the working directory. The board comes from the target's facts
(``board.zephyr_board``) unless the request overrides it, e.g. ``native_sim/native/64`` for CI compile
checks on a host without cross toolchains. ``--pristine=auto`` lets west wipe a build directory that
was configured for another board or app, so re-running with another target never mixes configurations.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
    tool_requirement,
)

#: The Zephyr release the templates are written against (the workspace install step pins it).
ZEPHYR_VERSION = "v4.1.0"

#: Board for host compile checks: a 64-bit native_sim needs no multilib gcc and no Zephyr SDK.
CI_BOARD = "native_sim/native/64"

INSTALL_WEST = "pip install west"
INSTALL_WORKSPACE = (
    "pip install west && "
    f"west init -m https://github.com/zephyrproject-rtos/zephyr --mr {ZEPHYR_VERSION} ~/zephyrproject && "
    "cd ~/zephyrproject && west update && west zephyr-export && west packages pip --install && "
    "export ZEPHYR_BASE=~/zephyrproject/zephyr"
)
INSTALL_SDK = "cd ~/zephyrproject/zephyr && west sdk install"


def find_zephyr_base() -> Path | None:
    """The Zephyr tree to build against: ``$ZEPHYR_BASE``, else ``<west topdir>/zephyr``."""
    env = os.environ.get("ZEPHYR_BASE")
    if env:
        base = Path(env).expanduser()
        return base if (base / "VERSION").is_file() else None
    west = shutil.which("west")
    if west is None:
        return None
    try:
        proc = subprocess.run([west, "topdir"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    base = Path(proc.stdout.strip()) / "zephyr"
    return base if (base / "VERSION").is_file() else None


def zephyr_version(base: Path) -> str:
    """``MAJOR.MINOR.PATCH`` from the tree's ``VERSION`` file."""
    fields: dict[str, str] = {}
    for line in (base / "VERSION").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        fields[key.strip()] = value.strip()
    return ".".join(fields.get(k, "?") for k in ("VERSION_MAJOR", "VERSION_MINOR", "PATCHLEVEL"))


def workspace_version() -> str | None:
    """``MAJOR.MINOR.PATCH`` of the Zephyr tree a build would use (None without a workspace)."""
    base = find_zephyr_base()
    return zephyr_version(base) if base is not None else None


def release_mismatch(written_for: str | None, base: Path) -> Evidence | None:
    """E_SDK_VERSION when the artifact was written for another Zephyr release than the workspace's."""
    found = zephyr_version(base)
    if written_for is None or ".".join(found.split(".")[:2]) == written_for:
        return None
    return Evidence(
        code="E_SDK_VERSION",
        message=f"the artifact was written for Zephyr {written_for} but the workspace {base} is Zephyr {found}: "
        f"regenerate it with `rac-fw plan PLAN --zephyr-version {'.'.join(found.split('.')[:2])} --out DIR`",
        location=str(base / "VERSION"),
        objects=[f"Zephyr {written_for}", f"Zephyr {found}"],
    )


def find_zephyr_sdk() -> Path | None:
    """The Zephyr SDK (cross toolchains): ``$ZEPHYR_SDK_INSTALL_DIR`` or the CMake package registry."""
    env = os.environ.get("ZEPHYR_SDK_INSTALL_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    registry = Path.home() / ".cmake" / "packages" / "Zephyr-sdk"
    if registry.is_dir():
        for entry in sorted(registry.iterdir()):
            path = Path(entry.read_text(encoding="utf-8").strip())
            if path.is_dir():
                return path.parent.parent if path.name == "cmake" else path
    return None


def is_native(board: str) -> bool:
    """native_sim boards compile with the host gcc; everything else needs the Zephyr SDK."""
    return board.split("/")[0] in {"native_sim", "native_posix"}


@register_backend
class WestBackend(Backend):
    name = "west"
    capabilities = frozenset({Capability.BUILD})
    frameworks = frozenset({"zephyr"})
    description = f"Zephyr {ZEPHYR_VERSION} workspace build (`west build`)"

    def requirements(self) -> list[Requirement]:
        base = find_zephyr_base()
        workspace = Requirement(
            name="west workspace",
            present=base is not None,
            install=INSTALL_WORKSPACE,
            version=f"Zephyr {zephyr_version(base)}" if base else None,
            location=str(base) if base else None,
        )
        return [
            tool_requirement("west", INSTALL_WEST),
            workspace,
            tool_requirement("cmake", "apt-get install cmake (Zephyr needs >= 3.20)"),
            tool_requirement("ninja", "apt-get install ninja-build"),
            tool_requirement("dtc", "apt-get install device-tree-compiler"),
        ]

    def sdk_requirement(self) -> Requirement:
        """The Zephyr SDK, needed for every board except native_sim."""
        sdk = find_zephyr_sdk()
        return Requirement(
            name="Zephyr SDK",
            present=sdk is not None,
            install=INSTALL_SDK,
            location=str(sdk) if sdk else None,
            version=sdk.name if sdk else None,
        )

    def missing_for(self, framework: str | None = None, target: str | None = None) -> list[Evidence]:
        missing = self.missing()
        if target is not None:
            from rac_fw.domains.firmware.facts.load import load_target

            board = load_target(target).board.zephyr_board
            sdk = self.sdk_requirement()
            if board is not None and not is_native(board) and not sdk.present:
                missing.append(sdk.evidence(self.name))
        return missing

    def details(self) -> list[Requirement]:
        return [self.sdk_requirement()]

    def board_for(self, request: BuildRequest) -> str:
        """The ``-b`` value: the request's override, else the target's ``zephyr_board`` fact."""
        if request.board:
            return request.board
        from rac_fw.domains.firmware.facts.load import load_target

        board = load_target(request.target).board.zephyr_board
        if board is None:
            raise ValueError(f"target {request.target!r} has no Zephyr board")
        return board

    def command(self, request: BuildRequest, board: str) -> list[str]:
        """The exact ``west build`` command line (tests and ``--dry-run`` users read it)."""
        return [
            "west",
            "build",
            "-b",
            board,
            "-d",
            str(request.build_dir),
            "--pristine=auto",
            str(request.source_dir),
        ]

    def build(self, request: BuildRequest) -> BuildResult:
        try:
            board = self.board_for(request)
        except ValueError as exc:
            return BuildResult(
                backend=self.name,
                ok=False,
                build_dir=request.build_dir,
                evidence=[Evidence(code="E_BACKEND_UNSUPPORTED", message=str(exc), objects=[request.target])],
            )
        command = self.command(request, board)
        needed = self.requirements() + ([] if is_native(board) else [self.sdk_requirement()])
        missing = [req.evidence(self.name) for req in needed if not req.present]
        if missing:
            return BuildResult(
                backend=self.name, ok=False, build_dir=request.build_dir, command=command, evidence=missing
            )
        base = find_zephyr_base()
        assert base is not None
        mismatch = release_mismatch(request.sdk_version, base)
        if mismatch is not None:
            return BuildResult(
                backend=self.name, ok=False, build_dir=request.build_dir, command=command, evidence=[mismatch]
            )
        outcome = run_command(
            command,
            request.build_dir.parent / f"{request.build_dir.name}.west.log",
            request.timeout_s,
            cwd=base.parent,
            env={"ZEPHYR_BASE": str(base)},
        )
        elf = request.build_dir / "zephyr" / "zephyr.elf"
        return BuildResult(
            backend=self.name,
            ok=outcome.ok and elf.is_file(),
            build_dir=request.build_dir,
            command=command,
            image=elf if elf.is_file() else None,
            log=outcome.log,
            evidence=[] if outcome.ok else [outcome.evidence(self.name, "build")],
        )
