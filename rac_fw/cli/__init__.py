"""The ``rac-fw`` command line: the generic commands here, every other command from its domain.

The generic commands (``domains``, ``schema``, ``tasks``, ``observe``, ``submit``, ``replay``, ``eval``,
``report``, ``serve``) are the rows of :data:`GENERIC`; each registered domain adds its own
(``Domain.commands()``: firmware's ``plan``, ``build`` …, scheduling's ``scheduling`` group, each
domain's ``calibrate`` entry). Every command is a row naming its function (:class:`rac_fw.domain.Command`),
so building the app imports no command module and no domain package beyond its light class
(:mod:`.lazy`): ``rac-fw --help`` costs Typer and the registry, ``rac-fw plan`` adds only what planning
needs. This package never imports a domain.

Errors are a clear message plus evidence and a documented exit code, never a traceback:
0 clean pass, 1 verified failure with evidence, 2 invalid input (plan, action, task, file).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import cache
from typing import Any

import typer

from rac_fw.cli.lazy import Lazy, LazyGroup
from rac_fw.domain import Command

#: The distribution whose extras the generic commands name.
DISTRIBUTION = "rac-fw"

#: Groups several domains add commands to, with the help the group shows.
SHARED_GROUPS = {"calibrate": "Check that each domain's verifier accepts right and rejects wrong."}

#: The generic commands: they serve every domain through the five-operation interface.
GENERIC = (
    Command("domains", "rac_fw.cli.core:domains",
            "List the registered domains, with the install line of any whose extra is missing."),
    Command("schema", "rac_fw.cli.core:schema",
            "Print a JSON Schema: a domain's action payload (its index, or one operation), or a protocol message."),
    Command("tasks", "rac_fw.cli.core:tasks", "List a domain's tasks."),
    Command("observe", "rac_fw.cli.core:observe", "Print what an agent observes about a task."),
    Command("submit", "rac_fw.cli.core:submit",
            "Run one turn: validate, realize, verify, feedback. Exit 0 pass, 1 verified failure, 2 invalid."),
    Command("replay", "rac_fw.cli.core:replay_command",
            "Check a trace's hash chain and episode structure, re-execute it and report every divergence."),
    Command("eval", "rac_fw.cli.eval:eval_command",
            "Evaluate a model through an interface: results in SQLite (resumable), HTML + PNG report.",
            install_extra="eval"),
    Command("report", "rac_fw.cli.report:report",
            "Draw a plan's memory map, DMA reach, pinout, DMA routes and verdicts, a schedule's Gantt chart or a "
            "board."),
    Command("serve", "rac_fw.cli.serve:serve_app", "Serve rac-fw to agent harnesses."),
)

#: Options that may stand alone, with the value a bare one means (``rac-fw plan P --build --run qemu``).
OPTIONAL_VALUES = {"--build": "auto"}


def generic_entries() -> dict[str, Lazy]:
    from rac_fw.cli.lazy import command_of, not_installed, unavailable
    from rac_fw.domain import missing_requirements

    def entry(command: Command) -> Lazy:
        extra = command.install_extra
        missing = missing_requirements(DISTRIBUTION, extra) if extra else ()
        if missing:
            install = f"pip install '{DISTRIBUTION}[{extra}]'"
            return Lazy(not_installed(command.summary, install), lambda: unavailable(
                command.name, f"`rac-fw {command.name}` needs {', '.join(missing)}", install))
        return Lazy(command.summary, lambda: command_of(command.name, command.load()))

    return {command.name: entry(command) for command in GENERIC}


class RacFw(LazyGroup):
    """The top-level group: the generic commands plus every registered domain's."""

    def entries(self) -> Mapping[str, Lazy]:
        from rac_fw.cli.domains import domain_entries

        return {**generic_entries(), **domain_entries()}


@cache
def build_app() -> typer.Typer:
    """The ``rac-fw`` Typer app (its commands are loaded when used)."""
    app = typer.Typer(
        name="rac-fw",
        cls=RacFw,
        help="Relational agent contract: observe facts, submit typed actions, get verdicts and repair evidence.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.callback()(_no_options)  # a group (not a single command) whose commands are all lazy
    return app


def _no_options() -> None:
    """The top level takes no options of its own."""


def __getattr__(name: str) -> Any:
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def optional_values(argv: list[str]) -> list[str]:
    """Let an option of :data:`OPTIONAL_VALUES` stand alone (``--build`` meaning ``--build auto``).

    Click options take a value or none, never an optional one, so a bare ``--build`` (last, or followed
    by another option) is rewritten to ``--build=auto`` before parsing.
    """
    out = []
    for i, arg in enumerate(argv):
        following = argv[i + 1] if i + 1 < len(argv) else None
        bare = arg in OPTIONAL_VALUES and (following is None or following.startswith("-"))
        out.append(f"{arg}={OPTIONAL_VALUES[arg]}" if bare else arg)
    return out


def main() -> None:
    build_app()(args=optional_values(sys.argv[1:]))
