"""The ``rac-fw`` command line. Each command group lives in its own module and registers itself here.

Errors are a clear message plus evidence and a documented exit code, never a traceback:
0 clean pass, 1 verified failure with evidence, 2 invalid input (plan, action, task, file).
"""

from __future__ import annotations

import sys

import typer

from rac_fw.cli import (
    build,
    calibrate,
    core,
    doctor,
    eval,
    hil,
    pcb,
    plan,
    report,
    scheduling,
    serve,
    targets,
    verify,
)

app = typer.Typer(
    name="rac-fw",
    help="Relational agent contract: observe facts, submit typed actions, get verdicts and repair evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command groups register themselves; one line per module (keep this block sorted).
build.register(app)
calibrate.register(app)
core.register(app)
doctor.register(app)
eval.register(app)
hil.register(app)
pcb.register(app)
plan.register(app)
report.register(app)
scheduling.register(app)
serve.register(app)
targets.register(app)
verify.register(app)


def main() -> None:
    app(args=plan.optional_build_value(sys.argv[1:]))
