"""``rac-fw eval`` end to end: pick tasks, open (or resume) a run in the store, execute, report.

A ``scripted:AGENT`` model starts the scripted server (:mod:`.scripted`) on 127.0.0.1 for the run and
points the OpenAI-compatible client at it over real HTTP; any other model is reached through its
provider's client. The report (HTML, PNG, ``summary.json``) is written to the output directory.
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
from rac_fw.eval.executor import EpisodeSpec, ModelSpec, Provider, run_local, run_ray
from rac_fw.eval.interfaces import Interface, get_interface
from rac_fw.eval.report import grouped, paired_bootstrap, plot_pass_vs_tokens, summarize, write_html
from rac_fw.eval.store import RunInfo, Store, run_id_for

SCRIPTED_PREFIX = "scripted:"


class EvalError(ValueError):
    """A located usage problem (``where`` names the option)."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where


@dataclass
class EvalRequest:
    domain: str
    interface: str
    model: str
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


def evaluate(request: EvalRequest, progress: Callable[[int, int, EpisodeResult | None], None] | None = None
             ) -> EvalOutcome:
    """Run (or resume) the evaluation described by ``request`` and write its report."""
    if request.seeds < 1 or request.budget < 1:
        raise EvalError("--seeds/--budget", "--seeds and --budget must be at least 1")
    if request.executor not in ("local", "ray"):
        raise EvalError("--executor", f"unknown executor {request.executor!r}; choose local or ray")
    try:
        interface = get_interface(request.domain, request.interface)
    except LookupError as exc:
        raise EvalError("--domain/--interface", str(exc)) from None
    tasks = select_tasks(interface, request.tasks)
    config = {"tasks": tasks, "seeds": request.seeds, "budget": request.budget, "options": asdict(request.options),
              "base_url": None if request.model.startswith(SCRIPTED_PREFIX) else request.base_url,
              "provider": request.provider}
    run_id = request.run_id or run_id_for(request.domain, request.interface, request.model, config)
    store = Store(request.store)
    try:
        info = store.run(run_id)
        if info is not None and not request.resume:
            raise EvalError("--resume", f"run {run_id} already exists in {request.store}: pass --resume to "
                            "continue it, or --run-id NAME for a new one")
        if info is None:
            info = RunInfo(run_id, request.domain, request.interface, request.model, config)
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
            specs = [EpisodeSpec(request.domain, request.interface, t, s, endpoint, request.budget, request.options)
                     for t, s in todo]
            if request.executor == "ray":
                run_ray(specs, record, request.address, request.workers)
            else:
                run_local(specs, record)
        episodes = store.episodes(run_id)
        comparison = None
        if request.compare is not None:
            other = store.run(request.compare)
            if other is None:
                raise EvalError("--compare", f"no run {request.compare!r} in {request.store}")
            comparison = (other, paired_bootstrap(episodes, store.episodes(other.id)))
        points = [(f"{r.model} · {r.interface}", summarize(store.episodes(r.id)))
                  for r in store.runs() if r.domain == request.domain]
        out = request.out or request.store.with_suffix("") / run_id
        png = plot_pass_vs_tokens(points, out / "pass_vs_tokens.png")
        write_html(out / "report.html", info, episodes, png, comparison)
        summary = {
            "run": run_id, "domain": info.domain, "interface": info.interface, "model": info.model,
            "overall": summarize(episodes).to_json(),
            "per_family": {k: v.to_json() for k, v in grouped(episodes, "family").items()},
            "per_target": {k: v.to_json() for k, v in grouped(episodes, "target").items()},
            "comparison": None if comparison is None or comparison[1] is None else
            {"against": comparison[0].id, **asdict(comparison[1])},
            "report": str(out / "report.html"), "plot": str(png),
        }
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return EvalOutcome(info, episodes, len(todo), out, summary)
    finally:
        store.close()
