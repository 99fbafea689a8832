"""Generic domain commands: ``domains``, ``schema``, ``tasks``, ``observe``, ``submit``, ``replay``.

They work for every registered domain through the five-operation interface; nothing here knows a
particular domain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from rac_fw.console.options import LimitOption, configure_limits
from rac_fw.console.output import (
    EXIT_INVALID,
    console,
    emit_feedback,
    exit_code_for,
    fail_with,
)
from rac_fw.contract import Action, Evidence, Feedback, Status
from rac_fw.documents import DocumentError, read_document
from rac_fw.domain import (
    Domain,
    DomainUnavailable,
    UnknownDomain,
    UnknownTask,
    domain_names,
    domain_status,
    load_domain,
    schema_for,
)
from rac_fw.limits import LimitExceeded, check_count
from rac_fw.runtime import DEFAULT_BUDGET, Episode, TraceError, replay_report
from rac_fw.trace import load_key

JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output (versioned JSON).")]
KeyOption = Annotated[Path | None, typer.Option(
    "--key", help="Key file: sign the trace (HMAC-SHA256) when writing, check the signatures when replaying.")]
def domain_error(exc: UnknownDomain | DomainUnavailable) -> Evidence:
    """Evidence for a domain that cannot be loaded: not registered, or its extra not installed."""
    if isinstance(exc, DomainUnavailable):
        return Evidence(code="E_NOT_INSTALLED", message=str(exc), location="DOMAIN", objects=[exc.name, exc.install])
    return Evidence(code="E_UNKNOWN_DOMAIN", message=str(exc), location="DOMAIN", objects=[exc.name])


def _domain(name: str, as_json: bool = False) -> Domain:
    try:
        return load_domain(name)
    except (UnknownDomain, DomainUnavailable) as exc:
        fail_with([domain_error(exc)], as_json=as_json)


def _unknown_task(exc: UnknownTask, as_json: bool) -> None:
    fail_with(
        [Evidence(code="E_UNKNOWN_TASK", message=str(exc), location="TASK", objects=[exc.task])], as_json=as_json
    )


def domains(as_json: JsonFlag = False) -> None:
    """List the registered domains, with the install line of any whose extra is missing.

    A domain registered through the ``rac_fw.domains`` entry points is listed with its task count when
    it can be used here; one whose extra is not installed is listed with the command that installs it
    (and what is missing); a plugin that fails to load is listed with its error.
    """
    rows: list[dict[str, Any]] = []
    for name in domain_names():
        status = domain_status(name)
        row: dict[str, Any] = {"domain": name, "available": status.available}
        if status.install is not None:
            row.update(install=status.install, missing=list(status.missing))
        elif status.error is not None:
            row["error"] = status.error
        else:
            try:
                row["tasks"] = len(load_domain(name).tasks())
            except Exception as exc:  # a broken third-party plugin must not hide the others
                row.update(available=False, error=f"{type(exc).__name__}: {exc}")
        rows.append(row)
    if as_json:
        console.print_json(json.dumps({"domains": rows}))
        return
    table = Table("domain", "tasks", "status")
    for row in rows:
        if "tasks" in row:
            table.add_row(row["domain"], str(row["tasks"]), "available")
        elif "install" in row:
            table.add_row(row["domain"], "—", f"[yellow]not installed[/] (missing {escape(', '.join(row['missing']))})"
                          f": {escape(row['install'])}")
        else:
            table.add_row(row["domain"], "—", f"[red]unavailable: {escape(row['error'])}[/]")
    console.print(table)


def schema(
    name: Annotated[str, typer.Argument(
        metavar="NAME", help="A domain (its action schema), or feedback, observation, action, plan-result.")],
    op: Annotated[str | None, typer.Option(
        "--op", metavar="OP", help="One part of a domain's action: a firmware operation kind, or resources.")] = None,
    index: Annotated[bool, typer.Option(
        "--index", help="The domain's compact index (firmware: one line per operation), not its schema.")] = False,
) -> None:
    """Print a JSON Schema: a domain's action payload (its index, or one operation), or a protocol message."""
    try:
        console.print_json(json.dumps(schema_for(name, part=op, index=index)))
    except DomainUnavailable as exc:
        fail_with([domain_error(exc)])
    except LookupError as exc:
        where, obj = ("--op", str(op)) if op is not None and name in domain_names() else ("NAME", name)
        fail_with([Evidence(code="E_UNKNOWN_SCHEMA", message=str(exc), location=where, objects=[obj])])


def tasks(domain: str) -> None:
    """List a domain's tasks."""
    dom = _domain(domain)
    for task in dom.tasks():
        line = dom.task_summary(task)
        console.print(escape(task if line is None else f"{task:<36} {line}"))


def observe(
    domain: str,
    task: str,
    detail: Annotated[str | None, typer.Option(help="Ask for depth on one named object.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Print what an agent observes about a task."""
    dom = _domain(domain, as_json)
    try:
        obs = dom.observe(task, detail)
    except UnknownTask as exc:
        _unknown_task(exc, as_json)
        return
    except LookupError as exc:
        fail_with([Evidence(code="E_UNKNOWN_OBJECT", message=str(exc), location="--detail")], as_json=as_json)
    if as_json:
        console.print_json(obs.model_dump_json())
    else:
        console.print(f"[bold]{obs.domain}/{escape(obs.task)}[/]: {escape(obs.summary)}")
        console.print_json(json.dumps(obs.data))


def submit(
    domain: str,
    task: str,
    action_file: Annotated[Path, typer.Argument(help="The action payload, JSON or YAML.")],
    as_json: JsonFlag = False,
    trace: Annotated[Path | None, typer.Option(help="Append this turn to a JSONL trace.")] = None,
    seed: int = 0,
    key: KeyOption = None,
    limit: LimitOption = None,
) -> None:
    """Run one turn: validate, realize, verify, feedback. Exit 0 pass, 1 verified failure, 2 invalid.

    With ``--trace`` the turn continues the episode the trace holds (its budget, seed and turn numbers),
    so repeated invocations build one chained episode. Every outcome, an unreadable action file
    included, is a ``Feedback`` message (``--json``: the versioned shape of ``rac-fw schema feedback``).
    """

    def invalid(evidence: list[Evidence]) -> NoReturn:
        emit_feedback(Feedback(domain=domain, task=task, status=Status.INVALID, evidence=evidence), as_json)
        raise typer.Exit(EXIT_INVALID)

    configure_limits(limit, as_json)
    try:
        check_count("task_chars", len(task), "TASK", "the task id's length")
    except LimitExceeded as exc:
        invalid([exc.evidence()])
    try:
        dom = load_domain(domain)
    except (UnknownDomain, DomainUnavailable) as exc:
        invalid([domain_error(exc)])
    try:
        secret = load_key(key) if key is not None else None
    except TraceError as exc:
        invalid(exc.evidence)
    if trace is not None:
        try:  # before the turn, so a turn is never run and then lost to an unwritable trace
            with trace.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            invalid([Evidence(code="E_FILE", message=f"cannot append to the trace: {exc.strerror or exc}",
                              location=str(trace))])
    try:
        payload = read_document(action_file, what="action file")
    except DocumentError as exc:
        invalid(exc.evidence)
    if not isinstance(payload, dict):
        invalid([Evidence(code="E_SCHEMA", message="the action file must hold a mapping (the action payload)",
                          location=str(action_file))])
    try:
        episode = (Episode.resume(dom, task, trace, seed=seed, key=secret) if trace is not None
                   else Episode(dom, task, seed=seed))
    except TraceError as exc:
        invalid(exc.evidence)
    try:
        feedback = episode.submit(Action(domain=domain, task=task, payload=payload))
    except UnknownTask as exc:  # domains may accept tasks beyond their catalogue (e.g. instance files)
        invalid([Evidence(code="E_UNKNOWN_TASK", message=str(exc), location="TASK", objects=[exc.task])])
    for ev in feedback.evidence:
        if ev.location and not ev.location.startswith(str(action_file)):
            ev.location = f"{action_file}: {ev.location}"
    emit_feedback(feedback, as_json)
    raise typer.Exit(exit_code_for(feedback))


def replay_command(trace: Path, key: KeyOption = None, budget: Annotated[int, typer.Option(
        min=1, help="Proposals you granted: an unsigned header may claim no more.")] = DEFAULT_BUDGET,
        limit: LimitOption = None) -> None:
    """Check a trace's hash chain and episode structure, re-execute it and report every divergence.

    Exit 0 when the trace is intact and every turn reproduces, 1 with located divergences (an edited,
    dropped, reordered, duplicated or renumbered turn, a changed header or seed, a truncated or empty
    trace, an unknown field, a bad signature, a different outcome), 2 when it is not a trace.
    """
    configure_limits(limit)
    try:
        secret = load_key(key) if key is not None else None
        done = replay_report(trace, secret, budget)
    except TraceError as exc:
        fail_with(exc.evidence)
    except (OSError, UnicodeDecodeError) as exc:
        fail_with([Evidence(code="E_TRACE", message=f"cannot read {trace}: {exc}", location=str(trace))])
    for div in done.divergences:
        detail = div.message or f"recorded {str(div.recorded)[:200]} → replayed {str(div.replayed)[:200]}"
        console.print(f"[red]divergence[/] {escape(f'{trace}:{div.line}')} {escape(div.field)}: {escape(detail)}")
    console.print(f"replayed {done.turns} turn(s): {len(done.divergences)} divergence(s); {escape(done.signatures)}")
    raise typer.Exit(1 if done.divergences else 0)
