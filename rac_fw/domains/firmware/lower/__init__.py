"""The shared lowering core: the framework registry, the ``Lowered`` artifact, and writing it to disk.

A *lowerer* turns a validated plan plus target facts into the complete source tree of one framework
(Zephyr, ESP-IDF, STM32 HAL, bare metal). Each framework module in this package registers itself with
``register_framework`` when imported; ``FRAMEWORKS`` is filled by importing every module of the package
on first use, so a new framework is one new module and nothing else changes. The lowering never judges
its own output: it returns a *receipt* (what it claims it realized) that the independent verifier
ignores.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import json
import os
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import jinja2

from rac_fw.contract import Evidence, Receipt, Relaxation, sha256_of
from rac_fw.domains.firmware.bind import BoundPlan, bind
from rac_fw.domains.firmware.facts.sdk import release
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.domains.firmware.plan.registry import section_values
from rac_fw.resources import data_dir

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.plan.model import Plan

#: Name of the manifest ``write_artifact`` leaves next to the files (what it wrote, with hashes).
MANIFEST_NAME = "rac-fw.manifest.json"


@dataclass(frozen=True)
class Lowered:
    """A generated source tree: relative POSIX path → file text, plus the lowerer's receipt."""

    framework: str
    target: str
    files: dict[str, str]
    receipt: Receipt = field(default_factory=Receipt)
    user_files: dict[str, str] = field(default_factory=dict)
    """The user's own files the tree includes and compiles (``usercode.placement``): path → the text
    ``write_artifact`` creates when absent. Not part of the tree's identity: never rewritten."""
    sdk_version: str | None = None
    """The framework release the tree is written for (``facts.sdk``: ``4.1``, ``3.7``, ``5.5``); the
    manifest records it so ``rac-fw build`` can refuse a workspace of another release."""

    def file_hashes(self) -> dict[str, str]:
        """sha256 of each file's UTF-8 bytes, keyed by relative path (sorted)."""
        return {path: hashlib.sha256(self.files[path].encode()).hexdigest() for path in sorted(self.files)}

    @property
    def artifact_hash(self) -> str:
        """Identity of the whole tree: the hash of the canonical {path: file hash} map."""
        return sha256_of({"framework": self.framework, "target": self.target, "files": self.file_hashes()})


class Lowerer(Protocol):
    """What a framework module registers: how to emit a bound plan.

    Which operations it can emit is not the lowerer's to say: each op spec declares its realizations
    and ``ops.matrix`` answers for obligations and lowerers alike.
    """

    name: str

    def lower(self, bound: BoundPlan) -> Lowered:
        """Emit the framework's complete source tree for a plan validated and bound for its target."""
        ...


class LoweringError(ValueError):
    """The plan is valid in general but this framework cannot realize part of it on this target.

    Carries located evidence (usually ``E_TARGET_UNSUPPORTED`` with relaxations), so the pipeline
    reports it exactly like an obligation violation: an invalid plan, not a crash.
    """

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(f"{e.location}: {e.message}" for e in evidence))


class UnknownFramework(LookupError):
    """Raised for a framework name no module registered."""

    def __init__(self, name: str, known: list[str]):
        self.name, self.known = name, known
        super().__init__(f"unknown framework {name!r}; registered: {', '.join(known) or 'none'}")


FRAMEWORKS: dict[str, Lowerer] = {}


def register_framework(name: str, lowerer: Lowerer) -> None:
    """Make ``lowerer`` available as ``name`` (called by each framework module at import)."""
    FRAMEWORKS[name] = lowerer


@cache
def _discover() -> None:
    """Import every module of this package once so each registers its framework."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def frameworks() -> dict[str, Lowerer]:
    """The registry after discovery: framework name → lowerer."""
    _discover()
    return FRAMEWORKS


def get_lowerer(name: str) -> Lowerer:
    """The lowerer registered as ``name`` (raises ``UnknownFramework``).

    A framework's module is named after it (``lower/zephyr/``, ``lower/hal.py``), so only it is imported
    here; the full discovery runs only when the name is not found that way (keeps a cold CLI fast).
    """
    if name not in FRAMEWORKS and re.fullmatch(r"[a-z][a-z0-9_]*", name):
        with contextlib.suppress(ModuleNotFoundError):
            importlib.import_module(f"{__name__}.{name}")
    if name in FRAMEWORKS:
        return FRAMEWORKS[name]
    registry = frameworks()
    if name not in registry:
        raise UnknownFramework(name, sorted(registry))
    return registry[name]


def lower(plan: Plan, target: Target, framework: str) -> Lowered:
    """Bind a validated ``plan`` for ``target`` and lower it with ``framework``; pure, deterministic.

    The receipt lists every binding, so an agent sees exactly which LED, pin or instance was chosen.
    """
    bound = bind(plan, target, framework)
    lowered = get_lowerer(framework).lower(bound)
    receipt = lowered.receipt.model_copy(update={"bindings": list(bound.bindings)})
    written_for = release(target, framework)
    return dataclasses.replace(lowered, receipt=receipt, sdk_version=written_for.version if written_for else None)


def lowers(plan: Plan, target: Target, framework: str) -> bool:
    """Whether the framework's lowering realizes a plan every obligation accepts.

    The obligations pass this as their acceptor (``obligations.check(..., accepts=lowers)``), so a
    relaxation is offered only if the patched plan also lowers: a relaxation is a promise.
    """
    try:
        lower(plan, target, framework)
    except (LoweringError, UnknownFramework):
        return False
    return True


def unsupported_operations(bound: BoundPlan) -> list[Evidence]:
    """E_TARGET_UNSUPPORTED for each operation the framework does not realize on the target (the
    obligations reject these first; a lowering called directly still refuses them with evidence)."""
    found: list[Evidence] = []
    for index, op in enumerate(bound.plan.operations):
        if not realizes(bound.framework, op.op, bound.target):
            found.append(
                Evidence(
                    code="E_TARGET_UNSUPPORTED",
                    message=f"{op.op} cannot be realized with {bound.framework} on {bound.target.id}",
                    location=f"operations[{index}]",
                    objects=[op.op, bound.target.id],
                    relaxations=[
                        Relaxation(
                            description=f"remove operations[{index}] ({op.op})",
                            patch=[{"op": "remove", "path": ["operations", index]}],
                        )
                    ],
                )
            )
    for section, _ in section_values(bound.plan):
        if not section.realizes(bound.framework, bound.target):
            found.append(
                Evidence(
                    code="E_TARGET_UNSUPPORTED",
                    message=f"the {section.name} block cannot be realized with {bound.framework} on {bound.target.id}",
                    location=section.name,
                    objects=[section.name, bound.target.id],
                    relaxations=[
                        Relaxation(
                            description=f"drop the {section.name} block",
                            patch=[{"op": "remove", "path": [section.name]}],
                        )
                    ],
                )
            )
    return found


def realize_sections(builder: Any, framework: str) -> None:
    """Let every plan-level block the plan sets add its settings and files to ``builder``
    (``unsupported_operations`` refused the blocks ``framework`` does not realize)."""
    for section, value in section_values(builder.plan):
        section.realizations[framework](builder, value)


def with_contributed(files: dict[str, str], contributed: dict[str, str]) -> dict[str, str]:
    """The project's files plus whole files operations and blocks contributed (a partition table, a
    sysbuild configuration); two contributions to one path are a defect of the specs, not of the plan."""
    clash = sorted(set(files) & set(contributed))
    if clash:
        raise RuntimeError(f"generated file contributed twice: {', '.join(clash)}")
    return {**files, **dict(sorted(contributed.items()))}


@cache
def template_env(framework: str) -> jinja2.Environment:
    """The Jinja environment over ``templates/<framework>/``.

    ``StrictUndefined`` turns a template typo into an error instead of silently empty C; no
    autoescaping because the output is C, where plan strings go through ``c_string_literal`` instead.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates") / framework)),
        bytecode_cache=_bytecode_cache(),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["tabs"] = tab_indent
    return env


def op_macros(
    env: jinja2.Environment, framework: str, kinds: dict[str, str], context: dict[str, Any] | None = None
) -> dict[str, Callable[..., str]]:
    """Operation kind → the macro named after it in its realization's template file.

    ``kinds`` maps each kind to its op spec's ``Realization.template`` (``templates/<framework>/<t>.c.j2``).
    Each operation renders through its own macro, never a family macro branching on the kind, so a
    family file grows by one macro per operation. ``context`` renders the modules with the skeleton's
    variables (what ``{% import … with context %}`` gives), for macros that read them (HAL ``h7``).
    """
    modules: dict[str, Any] = {}
    found: dict[str, Callable[..., str]] = {}
    for kind, template in kinds.items():
        if template not in modules:
            loaded = env.get_template(f"{template}.c.j2")
            modules[template] = loaded.make_module(context) if context is not None else loaded.module
        macro = getattr(modules[template], kind, None)
        if not callable(macro):
            raise LookupError(f"templates/{framework}/{template}.c.j2 has no macro {kind}")
        found[kind] = macro
    return found


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates cached per user (``$XDG_CACHE_HOME/rac-fw/jinja``): a cold ``rac-fw plan``
    then loads bytecode instead of compiling every template. Output bytes are unaffected; an unwritable
    cache directory just means no cache."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rac-fw" / "jinja"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(base)) if os.access(base, os.W_OK) else None


def tab_indent(text: str, depth: int = 1) -> str:
    """Indent every non-empty line by ``depth`` tabs (C sources here use tab indentation)."""
    prefix = "\t" * depth
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


class ArtifactConflict(OSError):
    """Writing the tree would overwrite files rac-fw did not write, or edited since; ``evidence`` lists them."""

    def __init__(self, evidence: list[Evidence]):
        self.evidence = evidence
        super().__init__("; ".join(e.message for e in evidence))


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _previous_manifest(path: Path) -> dict[str, str]:
    """``path → sha256`` of the files the last ``write_artifact`` wrote (empty when absent or unreadable)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return {}
    out: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("sha256"), str):
            out[entry["path"]] = entry["sha256"]
    return out


def write_artifact(lowered: Lowered, out_dir: Path | str, force: bool = False) -> dict[str, Any]:
    """Write the tree under ``out_dir`` and return its manifest (per-file sha256 and size).

    Never clobbers: the manifest records the hash of every file rac-fw wrote, and a file that is about
    to be overwritten must be one of those, unedited — otherwise nothing is written and
    :class:`ArtifactConflict` lists every such file (``force`` overwrites them). Files the previous tree
    had and the new one lacks are removed only when unedited (so a stale ``boards/*.overlay`` from
    another target cannot leak into a build, and nothing of the user's is deleted). The user-code files
    the tree includes and builds (``Lowered.user_files``, see :mod:`~rac_fw.domains.firmware.usercode`)
    are created once, when absent.
    """
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    manifest_path = root / MANIFEST_NAME
    previous = _previous_manifest(manifest_path)
    resolved_root = root.resolve()
    hashes = lowered.file_hashes()
    conflicts: list[str] = []
    for rel in sorted(lowered.files):
        current = _sha256(root / rel)
        if current is None or current == hashes[rel]:
            continue
        if current != previous.get(rel) and not force:
            conflicts.append(rel)
    stale: list[Path] = []
    for rel, recorded in previous.items():
        path = (root / rel).resolve()
        # A hand-edited manifest must not make us delete anything outside the artifact directory.
        if rel in lowered.files or not path.is_relative_to(resolved_root) or not path.is_file():
            continue
        if _sha256(path) == recorded:
            stale.append(path)
    if conflicts:
        raise ArtifactConflict([Evidence(
            code="E_OUTPUT_CONFLICT", location=str(root), objects=conflicts,
            message=f"refusing to overwrite {len(conflicts)} file(s) in {root} that rac-fw did not write or that "
            f"were edited since it wrote them: {', '.join(conflicts[:20])}{' …' if len(conflicts) > 20 else ''}",
            relaxations=[Relaxation(description="write to another --out directory, move your files away, or give "
                                    "--force to overwrite them (keep your code in the user.c/user.h files)")])])
    for path in stale:
        path.unlink()
    for rel in sorted(lowered.files):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = lowered.files[rel].encode()
        if _sha256(path) != hashes[rel]:
            path.write_bytes(data)
    user = lowered.user_files
    for rel, text in user.items():
        path = root / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    manifest: dict[str, Any] = {
        "framework": lowered.framework,
        "target": lowered.target,
        "artifact_hash": lowered.artifact_hash,
        "files": [
            {"path": rel, "sha256": hashes[rel], "bytes": len(lowered.files[rel].encode())}
            for rel in sorted(lowered.files)
        ],
        "user_files": sorted(user),
    }
    if lowered.sdk_version is not None:
        manifest["sdk_version"] = lowered.sdk_version
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest
