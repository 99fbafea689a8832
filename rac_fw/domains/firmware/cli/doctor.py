"""``rac-fw doctor``: what this machine can build, run and flash, measured now, never assumed.

Every row comes from the backends' own ``requirements()``/``details()`` (the same probes that produce
missing-tool evidence during a build), plus the connected debug probes and serial ports. The target
table then asks each backend whether it is ready for each (target, framework), so "enables" is
derived, not written down. The bench extra's packages are read from rac-fw's own package metadata
(``pip install 'rac-fw[bench]'``), so the list lives once, in ``pyproject.toml``.

``rac-fw doctor --json`` prints one object (``schema`` = :data:`SCHEMA`):

* ``tools``: every requirement row, ``{name, present, install, version, location, problem, source}``;
  ``source`` is where the install step gets it: ``pypi``, ``debian`` or ``manual`` (no registry has
  it: a Zephyr workspace and SDK, an ESP-IDF tree, PlatformIO platforms, CMSIS packs); ``problem`` is
  null when present.
* ``bench``: the bench extra's packages, ``{name, requirement, present, version, location, install}``.
* ``manual_steps``: the missing ``manual`` rows, ``{name, problem, install}``: what to do by hand.
* ``backends``, ``targets`` (what each target/framework can build, run, flash here), ``probes``,
  ``ports``.
"""

from __future__ import annotations

import json
import shutil
import sysconfig
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Annotated, Literal

import typer
from packaging.requirements import Requirement as PackageRequirement
from rich.markup import escape
from rich.table import Table

from rac_fw.console.output import console
from rac_fw.domains.firmware.backends import Capability, Requirement, backends, get_backend
from rac_fw.domains.firmware.backends.base import tool_requirement

#: Host tools worth reporting even when no backend lists them (what they are for, how to get them).
HOST_TOOLS: tuple[tuple[str, str], ...] = (
    ("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi"),
    ("qemu-system-arm", "apt-get install qemu-system-arm"),
    ("gcc", "apt-get install build-essential"),
)


SCHEMA = "rac-fw.doctor/1"
#: The extra that brings the field's bench tools from PyPI.
BENCH_EXTRA = "bench"
BENCH_INSTALL = "pip install 'rac-fw[bench]'"
Source = Literal["pypi", "debian", "manual"]


@dataclass
class ToolRow:
    """One requirement as reported: the backend's row plus where its install step gets it."""

    name: str
    present: bool
    install: str
    version: str | None
    location: str | None
    problem: str | None
    source: Source


@dataclass
class BenchPackage:
    """One package of the bench extra and whether this environment has it."""

    name: str
    requirement: str
    present: bool
    version: str | None
    location: str | None
    install: str = BENCH_INSTALL


@dataclass
class TargetRow:
    """What one framework on one target can do here, and with which backends."""

    target: str
    framework: str
    build: list[str] = field(default_factory=list)
    run: list[str] = field(default_factory=list)
    flash: list[str] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    """The first missing piece of each backend that would otherwise serve this row."""


@dataclass
class Report:
    tools: list[ToolRow]
    bench: list[BenchPackage]
    manual_steps: list[dict[str, str | None]]
    backends: list[dict[str, object]]
    targets: list[TargetRow]
    probes: list[dict[str, str | None]]
    ports: list[str]
    schema: str = SCHEMA


def source_of(install: str) -> Source:
    """Where an install step gets its thing: a pip install is PyPI, an apt-get install is Debian, anything
    else (a git clone, ``west sdk install``, ``pio pkg install``, ``pyocd pack install``) no registry."""
    step = install.removeprefix("sudo ").strip()
    if step.startswith(("pip install", "python3 -m pip install")) and "&&" not in step:
        return "pypi"
    if step.startswith("apt-get install") and "&&" not in step:
        return "debian"
    return "manual"


def _off_path(req: Requirement) -> Requirement:
    """A tool installed next to this interpreter (a venv's bin/) that is missing only because that
    directory is not on PATH: say so, with the step that fixes it, instead of "pip install" again."""
    scripts = Path(sysconfig.get_path("scripts"))
    if req.present or req.location is not None or not (scripts / req.name).is_file():
        return req
    if shutil.which(req.name) is not None:
        return req
    return replace(
        req,
        problem=f"is installed in {scripts}, which is not on PATH",
        install=f". {scripts / 'activate'}" if (scripts / "activate").is_file() else f"export PATH={scripts}:$PATH",
    )


def _tools() -> list[ToolRow]:
    rows: dict[str, Requirement] = {}
    for name in backends():
        backend = get_backend(name)
        for req in backend.requirements() + backend.details():
            rows.setdefault(req.name, req)
    for tool, install in HOST_TOOLS:
        if tool not in rows:
            rows[tool] = tool_requirement(tool, install)
    return [
        ToolRow(
            name=req.name,
            present=req.present,
            install=req.install,
            version=req.version,
            location=req.location,
            problem=None if req.present else req.problem,
            source=source_of(req.install),
        )
        for req in map(_off_path, rows.values())
    ]


def _bench_packages() -> list[BenchPackage]:
    """The bench extra as rac-fw's installed metadata declares it, each checked in this environment."""
    try:
        declared = metadata.requires("rac-fw") or []
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return []
    rows = []
    for line in declared:
        req = PackageRequirement(line)
        if req.marker is None or not req.marker.evaluate({"extra": BENCH_EXTRA}):
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            rows.append(BenchPackage(req.name, str(req.specifier), False, None, None))
            continue
        rows.append(BenchPackage(req.name, str(req.specifier), True, dist.version, str(dist.locate_file(""))))
    return sorted(rows, key=lambda row: row.name)


def _target_rows() -> list[TargetRow]:
    from rac_fw.domains.firmware.facts.load import load_target, target_ids

    instances = [get_backend(name) for name in backends()]
    rows = []
    for target_id in target_ids():
        for framework in load_target(target_id).frameworks:
            row = TargetRow(target_id, framework)
            for backend in instances:
                for capability, bucket in (
                    (Capability.BUILD, row.build),
                    (Capability.RUN, row.run),
                    (Capability.FLASH, row.flash),
                ):
                    # The serial runner judges a bench board, which is no property of the target.
                    if backend.name == "serial" or not backend.supports(capability, framework, target_id):
                        continue
                    missing = backend.missing_for(framework, target_id)
                    if missing:
                        row.blocked_by.append(f"{backend.name}: {missing[0].message}")
                    else:
                        bucket.append(backend.name)
            rows.append(row)
    return rows


def _probes() -> list[dict[str, str | None]]:
    try:
        from rac_fw.domains.firmware.backends.pyocd import PyocdBackend

        return [
            {"unique_id": uid, "description": desc, "board_target": target}
            for uid, desc, target in PyocdBackend().probes()
        ]
    except ImportError:
        return []


def collect() -> Report:
    """Probe this machine now."""
    from rac_fw.domains.firmware.backends.serial import present_ports

    tools = _tools()
    return Report(
        tools=tools,
        bench=_bench_packages(),
        manual_steps=[
            {"name": t.name, "problem": t.problem, "install": t.install}
            for t in tools
            if t.source == "manual" and not t.present
        ],
        backends=[
            {
                "name": name,
                "capabilities": sorted(c.value for c in cls.capabilities),
                "frameworks": sorted(cls.frameworks),
                "description": cls.description,
                "missing": [e.message for e in get_backend(name).missing()],
            }
            for name, cls in backends().items()
        ],
        targets=_target_rows(),
        probes=_probes(),
        ports=present_ports(),
    )


def _print(report: Report) -> None:
    """One line per tool and backend (readable in a narrow terminal or a CI log), a table per target."""
    ok, no = "[green]✓[/]", "[red]✗[/]"
    console.print("[bold]Toolchains, SDKs, emulators[/]")
    for req in report.tools:
        if req.present:
            version = f" {req.version}" if req.version else ""
            console.print(f"  {ok} {escape(req.name)}{escape(version)}  [dim]{escape(req.location or '')}[/]")
        else:
            console.print(f"  {no} {escape(req.name)} {escape(req.problem or '')}: run `{escape(req.install)}`")
    console.print(f"[bold]Bench packages[/] ({escape(BENCH_INSTALL)})")
    for pkg in report.bench:
        if pkg.present:
            console.print(f"  {ok} {escape(pkg.name)} {escape(pkg.version or '')}")
        else:
            console.print(f"  {no} {escape(pkg.name)} not installed: run `{escape(pkg.install)}`")
    if report.manual_steps:
        console.print("[bold]Not on any package registry: set these up by hand[/]")
        for step in report.manual_steps:
            console.print(
                f"  {no} {escape(str(step['name']))} {escape(str(step['problem']))}: `{escape(str(step['install']))}`"
            )
    console.print("[bold]Backends[/]")
    for row in report.backends:
        missing = [str(m) for m in row["missing"]]  # type: ignore[attr-defined]
        can = ", ".join(row["capabilities"])  # type: ignore[arg-type]
        frameworks = ", ".join(row["frameworks"]) or "any framework"  # type: ignore[arg-type]
        status = "ready" if not missing else f"{len(missing)} missing (see above)"
        console.print(f"  {no if missing else ok} {row['name']} {escape(f'[{can}]')} for {frameworks}: {status}")
    table = Table(title="What this machine enables per target", title_justify="left")
    for column in ("target", "framework", "build", "run", "flash"):
        table.add_column(column)
    for t in report.targets:
        table.add_row(
            t.target, t.framework, ", ".join(t.build) or "—", ", ".join(t.run) or "—", ", ".join(t.flash) or "—"
        )
    console.print(table)
    probes = ", ".join(
        f"{p['unique_id']} ({p['description']}, {p['board_target'] or 'unknown board'})" for p in report.probes
    )
    console.print(f"[bold]Debug probes:[/] {escape(probes or 'none connected')}")
    console.print(f"[bold]Serial ports:[/] {escape(', '.join(report.ports) or 'none')}")


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Report the toolchains, SDKs, emulators and probes present here, and what each enables."""
    report = collect()
    if as_json:
        console.print_json(json.dumps(asdict(report), default=str))
    else:
        _print(report)

