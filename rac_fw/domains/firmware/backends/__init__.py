"""The backend registry: find a backend by name, pick a builder for a framework, resolve a ``--run`` spec.

Each module of this package defines one backend class decorated with ``@register_backend``; the
registry is filled by importing every module on first use, so a new tool is one new module. Modules
import their heavy Python dependencies (pyOCD, esptool) inside methods, so discovery stays cheap and
works when those packages are absent.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from functools import cache
from pathlib import Path

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.backends.base import (
    BACKENDS,
    Backend,
    BuildRequest,
    BuildResult,
    Capability,
    FlashRequest,
    FlashResult,
    Requirement,
    RunRequest,
    RunResult,
    register_backend,
)

__all__ = [
    "BACKENDS",
    "AUTO_ORDER",
    "Backend",
    "BackendError",
    "BuildRequest",
    "BuildResult",
    "Capability",
    "FlashRequest",
    "FlashResult",
    "Requirement",
    "RunRequest",
    "RunResult",
    "backends",
    "build_artifact",
    "read_manifest",
    "get_backend",
    "register_backend",
    "select_builder",
    "select_runner",
]

#: Order ``auto`` tries builders in: the native SDK tool first, PlatformIO as the portable fallback.
AUTO_ORDER = ("gcc", "west", "idf", "platformio")


class BackendError(LookupError):
    """No usable backend for a request; ``evidence`` says why and how to get one."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(e.message for e in evidence))


@cache
def _discover() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")


def backends() -> dict[str, type[Backend]]:
    """Every registered backend class by name (after importing this package's modules)."""
    _discover()
    return dict(sorted(BACKENDS.items()))


def get_backend(name: str) -> Backend:
    """A fresh instance of the backend registered as ``name``; raises ``BackendError`` if unknown."""
    registry = backends()
    if name not in registry:
        raise BackendError(
            [
                Evidence(
                    code="E_UNKNOWN_BACKEND",
                    message=f"unknown backend {name!r}; known: {', '.join(registry) or 'none'}",
                    objects=[name],
                )
            ]
        )
    return registry[name]()


def select_builder(name_or_auto: str, framework: str, target: str | None = None) -> Backend:
    """The builder to use for ``framework``.

    A named builder is returned when it can build that framework, present or not: the caller asks its
    ``missing()`` and reports that evidence (so ``--build west`` without a workspace says how to get
    one). ``auto`` returns the first *present* builder in ``AUTO_ORDER`` that supports the framework,
    or raises ``BackendError`` with the missing-tool evidence of every candidate.
    """
    if name_or_auto != "auto":
        backend = get_backend(name_or_auto)
        if not backend.supports(Capability.BUILD, framework, target):
            raise BackendError(
                [
                    Evidence(
                        code="E_BACKEND_UNSUPPORTED",
                        message=(
                            f"backend {backend.name!r} cannot build framework {framework!r}"
                            + (f" for target {target!r}" if target else "")
                            + f"; builders for it: {', '.join(_builders_for(framework, target)) or 'none'}"
                        ),
                        objects=[backend.name, framework],
                    )
                ]
            )
        return backend
    candidates = [get_backend(name) for name in _builders_for(framework, target)]
    for backend in candidates:
        if backend.available():
            return backend
    evidence = [e for backend in candidates for e in backend.missing()]
    if not candidates:
        evidence = [
            Evidence(
                code="E_BACKEND_UNSUPPORTED",
                message=f"no registered builder supports framework {framework!r}",
                objects=[framework],
            )
        ]
    raise BackendError(evidence)


def _builders_for(framework: str, target: str | None) -> list[str]:
    registry = backends()
    ordered = [n for n in AUTO_ORDER if n in registry] + [n for n in registry if n not in AUTO_ORDER]
    return [n for n in ordered if registry[n]().supports(Capability.BUILD, framework, target)]


def select_runner(spec: str) -> Backend:
    """Resolve ``--run`` to a registered runner by name (``qemu``, ``serial`` …).

    ``board:ID`` names a bench entry: the bench layer above this registry resolves it
    (:func:`rac_fw.domains.firmware.hil.board.runner_for`), so the tool registry never imports the bench.
    """
    if spec.startswith("board:"):
        raise BackendError(
            [
                Evidence(
                    code="E_BACKEND_UNSUPPORTED",
                    message=f"{spec!r} is a bench board: resolve it with the bench file (hil.board.runner_for)",
                    objects=[spec],
                )
            ]
        )
    backend = get_backend(spec)
    if Capability.RUN not in backend.capabilities:
        raise BackendError(
            [
                Evidence(
                    code="E_BACKEND_UNSUPPORTED",
                    message=f"backend {spec!r} cannot run an image; use `qemu` or `board:ID`",
                    objects=[spec],
                )
            ]
        )
    return backend


def read_manifest(artifact_dir: Path) -> dict[str, object]:
    """The ``rac-fw.manifest.json`` ``write_artifact`` left in an artifact directory (framework, target, files)."""
    from rac_fw.domains.firmware.lower import MANIFEST_NAME

    path = artifact_dir / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BackendError(
            [
                Evidence(
                    code="E_ARTIFACT",
                    message=f"{artifact_dir} is not a generated artifact (no {MANIFEST_NAME}); "
                    "write one with `rac-fw plan PLAN --out DIR`",
                    location=str(path),
                )
            ]
        ) from None
    except (OSError, ValueError) as exc:
        raise BackendError(
            [Evidence(code="E_ARTIFACT", message=f"unreadable manifest: {exc}", location=str(path))]
        ) from None
    if not isinstance(manifest, dict) or not {"framework", "target"} <= manifest.keys():
        raise BackendError([Evidence(code="E_ARTIFACT", message="manifest lacks framework/target", location=str(path))])
    return manifest


def build_artifact(
    artifact_dir: Path,
    builder: str = "auto",
    build_dir: Path | None = None,
    board: str | None = None,
    timeout_s: float = 900.0,
) -> BuildResult:
    """Build a generated artifact directory with the chosen (or first present) builder.

    The build goes to ``build_dir`` (default ``ARTIFACT_DIR/build``); missing tools come back as the
    result's evidence, an unusable builder choice raises ``BackendError``.
    """
    manifest = read_manifest(artifact_dir)
    framework, target = str(manifest["framework"]), str(manifest["target"])
    backend = select_builder(builder, framework, target)
    request = BuildRequest(
        source_dir=artifact_dir,
        target=target,
        framework=framework,
        build_dir=build_dir or artifact_dir / "build",
        board=board,
        timeout_s=timeout_s,
        sdk_version=str(manifest["sdk_version"]) if manifest.get("sdk_version") else None,
    )
    return backend.build(request)
