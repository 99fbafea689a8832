"""``rac-fw eval``: pose a domain's tasks to a model through one interface; store, resume, report.

    rac-fw eval --domain firmware --interface rac --model scripted:oracle --tasks 'fw/dma/*'
    rac-fw eval --domain logic --model qwen2.5-coder --base-url http://127.0.0.1:11434/v1 --api-key-env ''
    rac-fw eval --domain scheduling --interface c1t --provider anthropic --model claude-sonnet-4-5
    rac-fw eval --domain pcb --model scripted:oracle        # every PCB interface: rac and the five baselines

Without ``--interface`` every interface registered for the domain runs (each a run of its own, on the
same tasks, seeds and budget), and a per-interface table follows. Exit 0 when every episode ran and the
report was written (whatever the pass rate), 2 on bad usage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rac_fw.console.output import console, err_console, fail_with
from rac_fw.contract import Evidence


def eval_command(
    domain: Annotated[str, typer.Option("--domain", "-d", help="logic, scheduling, firmware (or a plugin's).")],
    model: Annotated[str, typer.Option("--model", "-m",
                                       help="Model name, or scripted:oracle|repairing|hostile|several.")],
    interface: Annotated[str | None, typer.Option(
        "--interface", "-i", help="rac, c1t, rawsdk, signatures, sourcelite, coord, coord_py, candidates, seq, req; "
        "several as a,b; default: every interface of the domain.")] = None,
    tasks: Annotated[list[str] | None, typer.Option("--tasks", help="Task ids or globs (repeatable).")] = None,
    seeds: Annotated[int, typer.Option(help="Episodes per task (seed 0..N-1).")] = 1,
    budget: Annotated[int, typer.Option(help="Model calls per episode.")] = 5,
    provider: Annotated[str, typer.Option(help="openai (any OpenAI-compatible server) or anthropic.")] = "openai",
    base_url: Annotated[str | None, typer.Option(help="API base URL (e.g. http://127.0.0.1:8000/v1).")] = None,
    api_key_env: Annotated[str | None, typer.Option(
        help="Environment variable holding the API key ('' for none; default OPENAI_API_KEY/ANTHROPIC_API_KEY).")
                           ] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    reasoning_effort: Annotated[str | None, typer.Option(help="low, medium or high.")] = None,
    max_tokens: Annotated[int, typer.Option(help="Output tokens per call.")] = 4096,
    executor: Annotated[str, typer.Option(help="local or ray.")] = "local",
    address: Annotated[str | None, typer.Option(help="Ray cluster address (with --executor ray).")] = None,
    workers: Annotated[int | None, typer.Option(
        help="Ray actors (--executor ray) or threads overlapping model calls (local, default 4).")] = None,
    store: Annotated[Path, typer.Option(help="SQLite results store.")] = Path(".rac-fw/eval/results.sqlite"),
    run_id: Annotated[str | None, typer.Option(help="Run id (default: derived from the run's definition).")] = None,
    resume: Annotated[bool, typer.Option(help="Continue a stored run: only missing episodes run.")] = False,
    out: Annotated[Path | None, typer.Option(help="Report directory (default: next to the store).")] = None,
    compare: Annotated[str | None, typer.Option(help="Paired bootstrap against this stored run id.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json.")] = False,
) -> None:
    """Evaluate a model through an interface: results in SQLite (resumable), HTML + PNG report."""
    from rac_fw.eval.clients import ModelOptions
    from rac_fw.eval.executor import ExecutorError
    from rac_fw.eval.runner import EvalError, EvalRequest, evaluate_all

    if reasoning_effort not in (None, "low", "medium", "high"):
        fail_with([Evidence(code="E_USAGE", location="--reasoning-effort", message="choose low, medium or high")],
                  as_json=as_json)
    if executor != "ray" and address is not None:
        fail_with([Evidence(code="E_USAGE", location="--address",
                            message="--address applies to --executor ray")], as_json=as_json)
    options = ModelOptions(temperature=temperature, reasoning_effort=reasoning_effort,  # type: ignore[arg-type]
                           max_tokens=max_tokens)
    request = EvalRequest(domain=domain, interface=interface, model=model, provider=provider, base_url=base_url,
                          api_key_env=api_key_env, tasks=list(tasks or []), seeds=seeds, budget=budget,
                          options=options, executor=executor, address=address, workers=workers, store=store,
                          run_id=run_id, resume=resume, out=out, compare=compare)
    with Progress(TextColumn("[bold]eval[/] {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, transient=False) as bar:
        handle = bar.add_task(f"{domain}:{interface or 'all'} · {model}", total=None)

        def progress(done: int, total: int, _result: object) -> None:
            bar.update(handle, completed=done, total=total)

        try:
            outcomes = evaluate_all(request, progress)
        except EvalError as exc:
            bar.stop()
            fail_with([Evidence(code="E_USAGE", location=exc.where, message=str(exc))], as_json=as_json)
        except ExecutorError as exc:
            bar.stop()
            fail_with([Evidence(code="E_EXECUTOR", location="--executor", message=str(exc))], as_json=as_json)
        except OSError as exc:
            bar.stop()
            fail_with([Evidence(code="E_FILE", location="--store/--out", message=str(exc))], as_json=as_json)
    if as_json:
        doc = outcomes[0].summary if len(outcomes) == 1 else {"runs": [o.summary for o in outcomes],
                                                              "interfaces": outcomes[0].summary["interfaces"]}
        console.print_json(json.dumps(doc, sort_keys=True))
        raise typer.Exit(0)
    for outcome in outcomes:
        _print_run(outcome.summary, outcome.ran)
    if len(outcomes) > 1:
        console.print(f"{'interface':<12}{'N':>5}{'pass':>8}{'CPR':>8}{'first':>8}{'calls':>7}{'tokens in':>11}"
                      f"{'out':>7}{'wall ms':>10}")
        for name, row in outcomes[0].summary["interfaces"].items():
            console.print(f"{escape(name):<12}{row['episodes']:>5}{row['pass_rate']:>8.3f}{row['cpr']:>8.3f}"
                          f"{row['first_pass_rate']:>8.3f}{row['calls_mean']:>7.2f}{row['tokens_in_mean']:>11.0f}"
                          f"{row['tokens_out_mean']:>7.0f}{row['wall_ms_median']:>10.0f}")


def _print_run(summary: dict, ran: int) -> None:
    s = summary["overall"]
    low, high = s["pass_range"]
    ci_low, ci_high = s["pass_ci"]
    console.print(f"run {escape(summary['run'])}: {ran} episode(s) run, {s['episodes']} stored")
    console.print(f"pass {s['passed']}/{s['episodes']} = {s['pass_rate']:.3f}  range [{low:.3f}, {high:.3f}]  "
                  f"95% CI [{ci_low:.3f}, {ci_high:.3f}]  first-proposal {s['first_pass_rate']:.3f}  "
                  f"CPR {s['cpr']:.3f}  calls {s['calls_mean']:.2f}  "
                  f"tokens in {s['tokens_in_mean']:.0f} out {s['tokens_out_mean']:.0f}  "
                  f"wall {s['wall_ms_median']:.0f} ms (median)  harness {s['harness_ms_per_call']:.2f} ms/call")
    quality = s.get("quality")
    if quality is not None:
        console.print(f"QPR {quality['qpr']:.3f} (valid and makespan ≤ 1.25 × optimum)  first-proposal QPR "
                      f"{quality['first_qpr']:.3f}  valid {quality['valid_rate']:.3f}  "
                      f"makespan {quality.get('makespan_mean', 0):.0f}  gap {quality.get('gap_mean', 0):.1%}")
    for label, rows in (("family", summary["per_family"]), ("target", summary["per_target"])):
        for key, row in rows.items():
            console.print(f"  {label} {escape(key):<28} {row['passed']}/{row['episodes']}  "
                          f"first {row['first_pass']}  tokens {row['tokens_in_mean']:.0f}/{row['tokens_out_mean']:.0f}")
    comparison = summary["comparison"]
    if comparison is not None:
        if "difference" in comparison:
            console.print(f"vs {escape(comparison['against'])}: difference {comparison['difference']:+.3f} "
                          f"[{comparison['low']:+.3f}, {comparison['high']:+.3f}] over {comparison['tasks']} tasks "
                          f"({comparison['resamples']} paired resamples)")
        if comparison["warning"]:
            err_console.print(f"[yellow]warning:[/] {escape(comparison['warning'])}")
    console.print(f"report: {escape(summary['report'])}  plot: {escape(summary['plot'])}")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
