"""Every registered domain's own commands, as lazy entries of the ``rac-fw`` app (``Domain.commands()``).

Domains are iterated through the entry-point registry; nothing here names one. A domain registered
under several names (PCB's baselines share the PCB class's commands) adds its commands once; two
domains claiming the same command keep the first in name order and the clash is reported by
:func:`contributions` (a test pins that there is none). A domain whose extra is missing keeps its
commands in the listing, marked with the install line, and each answers with it when run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rac_fw.cli.lazy import Lazy, LazyGroup, command_of, not_installed, unavailable
from rac_fw.domain import Command, domain_class, domain_names, domain_status


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


def _entry(domain: str, command: Command) -> Lazy:
    status = domain_status(domain)
    if status.install is not None:
        install = status.install
        return Lazy(not_installed(command.summary, install), lambda: unavailable(
            command.name, f"the {domain} domain needs {', '.join(status.missing)}", install))
    return Lazy(command.summary, lambda: command_of(command.name, command.load()))


def domain_entries() -> dict[str, Lazy]:
    """Each domain command as a lazy entry; commands of a shared group (``calibrate``) under one entry."""
    from rac_fw.cli import SHARED_GROUPS

    top: dict[str, Lazy] = {}
    grouped: dict[str, dict[str, Lazy]] = {}
    for domain, commands in contributions().by_domain.items():
        for command in commands:
            entry = _entry(domain, command)
            if command.group is None:
                top[command.name] = entry
            else:
                grouped.setdefault(command.group, {})[command.name] = entry

    def group(name: str, members: dict[str, Lazy]) -> Lazy:
        help_text = SHARED_GROUPS.get(name, "")
        return Lazy(help_text, lambda: LazyGroup(name=name, help=help_text, no_args_is_help=True, entries=members))

    return {**top, **{name: group(name, members) for name, members in grouped.items()}}
