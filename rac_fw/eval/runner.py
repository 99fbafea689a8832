"""``rac-fw eval`` end to end: pick tasks, open (or resume) a run in the store, execute, report.

A ``scripted:AGENT`` model starts the scripted server (:mod:`.scripted`) on 127.0.0.1 for the run and
points the OpenAI-compatible client at it over real HTTP; any other model is reached through its
provider's client. The report (HTML, PNG, ``summary.json``) is written to the output directory.

One request may name several interfaces (``--interface all`` or ``a,b``; the default for a domain is
every interface registered for it): each is a run of its own on the same tasks, seeds and budget, judged
by the same verifier, and the summary adds a per-interface table (pass rate, CPR, tokens, wall time).
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rac_fw.eval.clients import ModelOptions
from rac_fw.eval.episode import EpisodeResult
from rac_fw.eval.executor import DEFAULT_THREADS, EpisodeSpec, ModelSpec, Provider, RayPool, run_local
from rac_fw.eval.interfaces import Interface, get_interface, interfaces_of
from rac_fw.eval.report import comparison_of, grouped, plot_pass_vs_tokens, summarize, write_html
from rac_fw.eval.store import RunInfo, RunLocked, Store, config_mismatch, run_id_for, run_lock

SCRIPTED_PREFIX = "scripted:"


class EvalError(ValueError):
    """A located usage problem (``where`` names the option)."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where


@dataclass
class EvalRequest:
    domain: str
    interface: str | None = "rac"
    """One interface, several (``a,b``), ``all``, or None: every interface registered for the domain."""
    model: str = ""
    provider: str = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    tasks: list[str] = field(default_factory=list)
    seeds: int = 1
    budget: int = 5
    options: ModelOptions = field(default_factory=ModelOptions)
    executor: str = "local"
    address: str | None = None
    workers: int | None = None
    """Ray actors (``ray``) or threads (``local``, default 4)."""
    store: Path = Path(".rac-fw") / "eval" / "results.sqlite"
    run_id: str | None = None
    resume: bool = False
    out: Path | None = None
    compare: str | None = None


@dataclass
class EvalOutcome:
    run: RunInfo
    episodes: list[EpisodeResult]
    ran: int
    report_dir: Path
    summary: dict[str, Any]


DEFAULT_BASE = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
DEFAULT_KEY = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def select_tasks(interface: Interface, patterns: list[str]) -> list[str]:
    """The interface's tasks matching any pattern (exact ids or ``fnmatch`` globs); all when none given."""
    available = interface.tasks()
    if not patterns:
        return available
    chosen = [t for t in available if any(fnmatch.fnmatchcase(t, p) for p in patterns)]
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(t, p) for t in available)]
    if unmatched:
        raise EvalError("--tasks", f"no task of {interface.domain}:{interface.name} matches {', '.join(unmatched)}")
    return chosen


def interface_names(domain: str, wanted: str | None) -> list[str]:
    """The interfaces a request names (see :attr:`EvalRequest.interface`), checked against the registry."""
    registered = interfaces_of(domain)
    if not registered:
        raise EvalError("--domain", f"no interface is registered for domain {domain!r}")
    if wanted is None or wanted == "all":
        return registered
    names = [n.strip() for n in wanted.split(",") if n.strip()]
    unknown = [n for n in names if n not in registered]
    if unknown or not names:
        raise EvalError("--interface", f"no interface {', '.join(unknown) or repr(wanted)} for domain {domain!r}; "
                        f"registered: {', '.join(registered)} (or all)")
    return list(dict.fromkeys(names))


@contextlib.contextmanager
def model_endpoint(request: EvalRequest, interface: Interface) -> Iterator[ModelSpec]:
    if request.model.startswith(SCRIPTED_PREFIX):
        from rac_fw.eval.scripted import AGENTS, ScriptedServer

        agent = request.model[len(SCRIPTED_PREFIX):]
        if agent not in AGENTS:
            raise EvalError("--model", f"no scripted agent {agent!r}; choose one of {', '.join(AGENTS)}")
        with ScriptedServer(interface) as server:
            yield ModelSpec("openai", agent, server.base_url, None)
        return
    if request.provider not in DEFAULT_BASE:
        raise EvalError("--provider", f"unknown provider {request.provider!r}; choose openai or anthropic")
    provider: Provider = "anthropic" if request.provider == "anthropic" else "openai"
    key = request.api_key_env if request.api_key_env is not None else DEFAULT_KEY[provider]
    yield ModelSpec(provider, request.model, request.base_url or DEFAULT_BASE[provider], key or None)


def _definition(request: EvalRequest, interface: str, tasks: list[str]) -> dict[str, Any]:
    """What a run is: stored with it, hashed into its id, compared on ``--resume``."""
    scripted = request.model.startswith(SCRIPTED_PREFIX)
    return {"tasks": tasks, "seeds": request.seeds, "budget": request.budget, "options": asdict(request.options),
            "provider": "openai" if scripted else request.provider,
            "base_url": None if scripted else (request.base_url or DEFAULT_BASE.get(request.provider)),
            "interface": interface}


def _validate(request: EvalRequest) -> None:
    if not request.model:
        raise EvalError("--model", "name a model (or scripted:oracle|repairing|hostile|several)")
    if request.seeds < 1 or request.budget < 1:
        raise EvalError("--seeds/--budget", "--seeds and --budget must be at least 1")
    if request.executor not in ("local", "ray"):
        raise EvalError("--executor", f"unknown executor {request.executor!r}; choose local or ray")
    if request.workers is not None and request.workers < 1:
        raise EvalError("--workers", "--workers must be at least 1")


def evaluate(request: EvalRequest, progress: Callable[[int, int, EpisodeResult | None], None] | None = None
             ) -> EvalOutcome:
    """Run (or resume) the evaluation of one interface; with several, use :func:`evaluate_all`."""
    outcomes = evaluate_all(request, progress)
    if len(outcomes) != 1:
        raise EvalError("--interface", "evaluate() runs one interface; use evaluate_all() for several")
    return outcomes[0]


def evaluate_all(request: EvalRequest, progress: Callable[[int, int, EpisodeResult | None], None] | None = None
                 ) -> list[EvalOutcome]:
    """Run (or resume) the evaluation of every interface the request names and write their reports."""
    _validate(request)
    names = interface_names(request.domain, request.interface)
    store = Store(request.store)
    pool: RayPool | None = None
    try:
        with contextlib.ExitStack() as stack:
            if request.executor == "ray":
                pool = stack.enter_context(RayPool([request.domain], request.address, request.workers))
            outcomes = [_evaluate_one(request, name, store, pool, progress, len(names) > 1) for name in names]
        if len(outcomes) > 1:
            table = interface_table(outcomes)
            for outcome in outcomes:
                outcome.summary["interfaces"] = table
                path = outcome.report_dir / "summary.json"
                path.write_text(json.dumps(outcome.summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return outcomes
    finally:
        store.close()


def _evaluate_one(request: EvalRequest, name: str, store: Store, pool: RayPool | None,
                  progress: Callable[[int, int, EpisodeResult | None], None] | None, several: bool) -> EvalOutcome:
    try:
        interface = get_interface(request.domain, name)
    except LookupError as exc:
        raise EvalError("--domain/--interface", str(exc)) from None
    tasks = select_tasks(interface, request.tasks)
    config = _definition(request, name, tasks)
    run_id = request.run_id or run_id_for(request.domain, name, request.model, config)
    if request.run_id and several:
        run_id = f"{request.run_id}-{name}"
    wanted = RunInfo(run_id, request.domain, name, request.model, config)
    try:
        with run_lock(request.store, run_id):
            return _run(request, interface, tasks, wanted, store, pool, progress, several)
    except RunLocked as exc:
        raise EvalError("--run-id", str(exc)) from None


def _run(request: EvalRequest, interface: Interface, tasks: list[str], wanted: RunInfo, store: Store,
         pool: RayPool | None, progress: Callable[[int, int, EpisodeResult | None], None] | None,
         several: bool) -> EvalOutcome:
    """The episodes of one run that are not done yet (the caller holds the run's lock), then its report."""
    run_id, name = wanted.id, wanted.interface
    info = store.run(run_id)
    if info is not None and not request.resume:
        raise EvalError("--resume", f"run {run_id} already exists in {request.store}: pass --resume to "
                        "continue it, or --run-id NAME for a new one")
    if info is not None:
        differences = config_mismatch(info, wanted)
        if differences:
            raise EvalError("--resume", f"run {run_id} was defined differently; refusing to mix two setups in "
                            f"one run ({'; '.join(differences)}): use --run-id NAME for a new run")
    else:
        info = wanted
        store.create_run(info)
    done = store.done(run_id)
    todo = [(t, s) for t in tasks for s in range(request.seeds) if (t, s) not in done]
    total, finished = len(tasks) * request.seeds, len(done)
    if progress is not None:
        progress(finished, total, None)

    def record(result: EpisodeResult) -> None:
        nonlocal finished
        store.add(run_id, result)
        finished += 1
        if progress is not None:
            progress(finished, total, result)

    with model_endpoint(request, interface) as endpoint:
        specs = [EpisodeSpec(request.domain, name, t, s, endpoint, request.budget, request.options)
                 for t, s in todo]
        if pool is not None:
            pool.run(specs, record)
        else:
            run_local(specs, record, request.workers or DEFAULT_THREADS)
    return _report(request, store, info, len(todo), several)


def _report(request: EvalRequest, store: Store, info: RunInfo, ran: int, several: bool) -> EvalOutcome:
    episodes = store.episodes(info.id)
    comparison = None
    if request.compare is not None:
        other = store.run(request.compare)
        if other is None:
            raise EvalError("--compare", f"no run {request.compare!r} in {request.store}")
        comparison = comparison_of(info, episodes, other, store.episodes(other.id))
    points = [(r.model, r.interface, store.episodes(r.id)) for r in store.runs() if r.domain == request.domain]
    out = (request.out / info.interface if several else request.out) if request.out else None
    out = out or request.store.with_suffix("") / info.id
    png = plot_pass_vs_tokens(points, out / "pass_vs_tokens.png")
    write_html(out / "report.html", info, episodes, png, comparison)
    summary = {
        "run": info.id, "domain": info.domain, "interface": info.interface, "model": info.model,
        "overall": summarize(episodes).to_json(),
        "per_family": {k: v.to_json() for k, v in grouped(episodes, "family").items()},
        "per_target": {k: v.to_json() for k, v in grouped(episodes, "target").items()},
        "comparison": None if comparison is None else comparison.to_json(),
        "report": str(out / "report.html"), "plot": str(png),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return EvalOutcome(info, episodes, ran, out, summary)


def interface_table(outcomes: list[EvalOutcome]) -> dict[str, dict[str, Any]]:
    """Per interface: episodes, pass rate, CPR, first-proposal pass, tokens and wall time (from the summaries)."""
    table = {}
    for outcome in outcomes:
        s = outcome.summary["overall"]
        table[outcome.run.interface] = {
            "run": outcome.run.id, "episodes": s["episodes"], "pass_rate": s["pass_rate"],
            "pass_range": s["pass_range"], "cpr": s["cpr"], "first_pass_rate": s["first_pass_rate"],
            "tokens_in_mean": s["tokens_in_mean"], "tokens_out_mean": s["tokens_out_mean"],
            "wall_ms_median": s["wall_ms_median"], "calls_mean": s["calls_mean"]}
    return table
