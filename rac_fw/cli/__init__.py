"""The ``rac-fw`` command line: the generic commands here, every other command from its domain.

Generic command groups (``core``, ``eval``, ``report``, ``serve``) live in this package and register
themselves; each registered domain adds its own (``Domain.commands()``: firmware's ``plan``,
``build`` …, scheduling's ``scheduling`` group, each domain's ``calibrate`` entry). This package never
imports a domain. The app is built on first use (``from rac_fw.cli import app``), so a domain's
command module may import the shared helpers here (``cli.output``, ``cli.core``) without a cycle.

Errors are a clear message plus evidence and a documented exit code, never a traceback:
0 clean pass, 1 verified failure with evidence, 2 invalid input (plan, action, task, file).
"""

from __future__ import annotations

import sys
from functools import cache
from typing import Any

import typer

#: Groups several domains add commands to, with the help the group shows.
SHARED_GROUPS = {"calibrate": "Check that each domain's verifier accepts right and rejects wrong."}

#: Options that may stand alone, with the value a bare one means (``rac-fw plan P --build --run qemu``).
OPTIONAL_VALUES = {"--build": "auto"}


@cache
def build_app() -> typer.Typer:
    """The ``rac-fw`` Typer app: the generic commands, then every registered domain's."""
    from rac_fw.cli import core, domains, eval, report, serve

    app = typer.Typer(
        name="rac-fw",
        help="Relational agent contract: observe facts, submit typed actions, get verdicts and repair evidence.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    # Generic command groups register themselves; one line per module (keep this block sorted).
    core.register(app)
    eval.register(app)
    report.register(app)
    serve.register(app)
    domains.register(app)
    return app


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
