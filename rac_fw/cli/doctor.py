"""``rac-fw doctor``: what this machine can build, run and flash, measured now, never assumed.

Every row comes from the backends' own ``requirements()``/``details()`` (the same probes that produce
missing-tool evidence during a build), plus the connected debug probes and serial ports. The target
table then asks each backend whether it is ready for each (target, framework), so "enables" is
derived, not written down.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from rac_fw.cli.output import console
from rac_fw.domains.firmware.backends import Capability, Requirement, backends, get_backend
from rac_fw.domains.firmware.backends.base import tool_requirement

#: Host tools worth reporting even when no backend lists them (what they are for, how to get them).
HOST_TOOLS: tuple[tuple[str, str], ...] = (
    ("arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi"),
    ("qemu-system-arm", "apt-get install qemu-system-arm"),
    ("gcc", "apt-get install build-essential"),
)


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
    tools: list[Requirement]
    backends: list[dict[str, object]]
    targets: list[TargetRow]
    probes: list[dict[str, str | None]]
    ports: list[str]


def _tools() -> list[Requirement]:
    rows: dict[str, Requirement] = {}
    for name in backends():
        backend = get_backend(name)
        for req in backend.requirements() + backend.details():
            rows.setdefault(req.name, req)
    for tool, install in HOST_TOOLS:
        if tool not in rows:
            rows[tool] = tool_requirement(tool, install)
    return list(rows.values())


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

    return Report(
        tools=_tools(),
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
            console.print(f"  {no} {escape(req.name)} {escape(req.problem)}: run `{escape(req.install)}`")
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


def register(app: typer.Typer) -> None:
    app.command()(doctor)
