"""Commands built on use: ``rac-fw --help`` lists every command from its registration row (name and
summary) and only the command that runs is imported, with the modules it needs.

A :class:`LazyGroup` holds a placeholder per command (its summary, for help listings) and swaps in the
real command when Click resolves the name to run it or show its own help. A command whose domain (or
extra) is not installed resolves to :func:`unavailable`: its install line and exit 2, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Lazy:
    """A command known by its summary until it is used; ``load`` builds the real Click command."""

    summary: str
    load: Callable[[], Any]


class LazyGroup(TyperGroup):
    """A Typer group whose commands are :class:`Lazy` entries, loaded one at a time on resolution."""

    def __init__(self, *, entries: Mapping[str, Lazy] | None = None, **attrs: Any):
        super().__init__(**attrs)
        self.lazy = dict(entries if entries is not None else self.entries())
        for name, entry in self.lazy.items():
            self.commands.setdefault(name, TyperCommand(name=name, short_help=entry.summary, help=entry.summary))

    def entries(self) -> Mapping[str, Lazy]:
        """The entries of a group made without ``entries`` (the top-level app, built by Typer)."""
        return {}

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted(self.commands)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None and name in self.lazy:
            command = self.load(name)
        return name, command, rest

    def load(self, name: str) -> Any:
        """The real command ``name`` (built once)."""
        entry = self.lazy.pop(name, None)
        if entry is not None:
            command = entry.load()
            command.name = name
            self.commands[name] = command
        return self.commands[name]


def command_of(name: str, target: Any) -> Any:
    """The Click command for a Typer command function, or the Click group for a ``typer.Typer``."""
    if isinstance(target, typer.Typer):
        return typer.main.get_group(target)
    app = typer.Typer(add_completion=False)
    app.command(name)(target)
    return typer.main.get_command(app)


def not_installed(summary: str, install: str) -> str:
    """A listed command's summary marked with the line that installs it (bracketed text escaped: the
    help is rendered as Rich markup, where ``[pcb]`` would be read as a style tag)."""
    from rich.markup import escape

    return escape(f"{summary} [not installed: {install}]")


def unavailable(name: str, message: str, install: str) -> Any:
    """A command standing in for one whose requirements are missing: whatever its arguments, it prints
    the located error with the install line and exits 2 (invalid input: nothing ran)."""

    def stand_in(args: list[str] | None = typer.Argument(None, hidden=True)) -> None:  # noqa: B008
        from rac_fw.console.output import fail_with
        from rac_fw.contract import Evidence

        fail_with([Evidence(code="E_NOT_INSTALLED", location=name, objects=[install],
                            message=f"{message}; install it with: {install}")])

    app = typer.Typer(add_completion=False)
    app.command(name, help=f"Not installed here: {install}", add_help_option=False,
                context_settings={"ignore_unknown_options": True, "allow_extra_args": True})(stand_in)
    return typer.main.get_command(app)
