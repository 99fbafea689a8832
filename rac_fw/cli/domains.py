"""Every registered domain's own commands, added to the ``rac-fw`` app (``Domain.commands()``).

Domains are iterated through the entry-point registry; nothing here names one. A domain registered
under several names (PCB's baselines share the PCB class's commands) adds its commands once; two
domains claiming the same command keep the first in name order and the clash is reported by
:func:`contributions` (a test pins that there is none).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import typer

from rac_fw.domain import Command, domain_class, domain_names


@dataclass
class Contributions:
    """The commands each domain adds (in registration order) and any that clashed with an earlier one."""

    by_domain: dict[str, list[Command]] = field(default_factory=dict)
    clashes: list[tuple[str, Command]] = field(default_factory=list)


def contributions() -> Contributions:
    found = Contributions()
    claimed: dict[str, Command] = {}
    for name in domain_names():
        try:
            commands = domain_class(name).commands()
        except Exception:  # a broken plugin must not take the CLI down; `rac-fw domains` still lists it
            continue
        for command in commands:
            earlier = claimed.get(command.path)
            if earlier == command:
                continue
            if earlier is not None:
                found.clashes.append((name, command))
                continue
            claimed[command.path] = command
            found.by_domain.setdefault(name, []).append(command)
    return found


def register(app: typer.Typer) -> None:
    from rac_fw.cli import SHARED_GROUPS

    groups: dict[str, typer.Typer] = {}
    for commands in contributions().by_domain.values():
        for command in commands:
            parent = app
            if command.group is not None:
                if command.group not in groups:
                    groups[command.group] = typer.Typer(help=SHARED_GROUPS.get(command.group), no_args_is_help=True)
                    app.add_typer(groups[command.group], name=command.group)
                parent = groups[command.group]
            if isinstance(command.target, typer.Typer):
                parent.add_typer(command.target, name=command.name)
            else:
                parent.command(command.name)(command.target)
