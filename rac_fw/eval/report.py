"""Reports over stored runs: pass rates with their unknown range, costs, groups, paired bootstrap, plots.

* pass rate ``P/N`` with the range ``[P/N, (P+U)/N]`` — U episodes could not be decided (model
  unreachable, a tool missing), so the true rate lies in that range;
* first-proposal pass rate, model calls, input/output tokens and wall time per episode;
* the same per family and per target;
* a paired bootstrap (5,000 resamples of *tasks*, seeds averaged within a task) of the difference in
  pass rate between two runs over their common tasks — interfaces or models compared on equal tasks;
* a PNG of pass rate against mean tokens per episode, one point per run (model × interface), and an
  HTML page holding all of it.
"""

from __future__ import annotations

import html
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rac_fw.eval.episode import EpisodeResult
from rac_fw.eval.store import RunInfo

BOOTSTRAP_RESAMPLES = 5000


@dataclass(frozen=True)
class Summary:
    episodes: int
    passed: int
    unknown: int
    first_pass: int
    calls_mean: float
    tokens_in_mean: float
    tokens_out_mean: float
    wall_ms_median: float
    harness_ms_per_call: float

    @property
    def pass_rate(self) -> float:
        return self.passed / self.episodes if self.episodes else 0.0

    @property
    def pass_range(self) -> tuple[float, float]:
        if not self.episodes:
            return (0.0, 0.0)
        return (self.passed / self.episodes, (self.passed + self.unknown) / self.episodes)

    @property
    def first_pass_rate(self) -> float:
        return self.first_pass / self.episodes if self.episodes else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "pass_rate": self.pass_rate, "pass_range": list(self.pass_range),
                "first_pass_rate": self.first_pass_rate}


def summarize(episodes: list[EpisodeResult]) -> Summary:
    n = len(episodes)
    calls = sum(len(e.calls) for e in episodes)

    def mean(values: Iterable[float]) -> float:
        values = list(values)
        return statistics.fmean(values) if values else 0.0

    return Summary(
        episodes=n,
        passed=sum(e.outcome == "pass" for e in episodes),
        unknown=sum(e.outcome == "unknown" for e in episodes),
        first_pass=sum(e.first_pass for e in episodes),
        calls_mean=calls / n if n else 0.0,
        tokens_in_mean=mean(e.tokens_in for e in episodes),
        tokens_out_mean=mean(e.tokens_out for e in episodes),
        wall_ms_median=statistics.median(e.wall_ms for e in episodes) if episodes else 0.0,
        harness_ms_per_call=sum(e.harness_ms for e in episodes) / calls if calls else 0.0,
    )


def grouped(episodes: list[EpisodeResult], label: str) -> dict[str, Summary]:
    groups: dict[str, list[EpisodeResult]] = defaultdict(list)
    for e in episodes:
        groups[e.labels.get(label, "-")].append(e)
    return {key: summarize(groups[key]) for key in sorted(groups)}


@dataclass(frozen=True)
class PairedBootstrap:
    tasks: int
    difference: float
    """Mean pass rate of run A minus run B over the common tasks."""
    low: float
    high: float
    resamples: int


def _per_task(episodes: list[EpisodeResult]) -> dict[str, float]:
    by_task: dict[str, list[float]] = defaultdict(list)
    for e in episodes:
        by_task[e.task].append(1.0 if e.outcome == "pass" else 0.0)
    return {t: statistics.fmean(v) for t, v in by_task.items()}


def paired_bootstrap(a: list[EpisodeResult], b: list[EpisodeResult], resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = 0, level: float = 0.95) -> PairedBootstrap | None:
    """Interval of pass(A) − pass(B), resampling the common tasks with replacement (None: no common task)."""
    rate_a, rate_b = _per_task(a), _per_task(b)
    common = sorted(set(rate_a) & set(rate_b))
    if not common:
        return None
    diffs = np.array([rate_a[t] - rate_b[t] for t in common])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(common), size=(resamples, len(common)))
    means = diffs[picks].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return PairedBootstrap(len(common), float(diffs.mean()), float(low), float(high), resamples)


def plot_pass_vs_tokens(points: list[tuple[str, Summary]], path: Path) -> Path:
    """PNG: mean tokens (in + out) per episode against pass rate, the unknown range as an error bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    for label, s in points:
        tokens = s.tokens_in_mean + s.tokens_out_mean
        low, high = s.pass_range
        ax.errorbar([tokens], [s.pass_rate], yerr=[[0.0], [high - low]], fmt="o", capsize=4, label=label)
    if points and all(s.tokens_in_mean + s.tokens_out_mean > 0 for _, s in points):
        ax.set_xscale("log")
    ax.set_xlabel("tokens per episode (mean, in + out)")
    ax.set_ylabel("pass rate")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    if points:
        ax.legend(fontsize=7, loc="best")
    ax.set_title("pass rate vs tokens (model × interface)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _table(title: str, rows: dict[str, Summary]) -> str:
    head = ("<tr><th>group</th><th>N</th><th>pass</th><th>range</th><th>first-proposal</th><th>calls</th>"
            "<th>tokens in</th><th>tokens out</th><th>wall ms (median)</th></tr>")
    body = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{s.episodes}</td><td>{s.pass_rate:.3f}</td>"
        f"<td>[{s.pass_range[0]:.3f}, {s.pass_range[1]:.3f}]</td><td>{s.first_pass_rate:.3f}</td>"
        f"<td>{s.calls_mean:.2f}</td><td>{s.tokens_in_mean:.0f}</td><td>{s.tokens_out_mean:.0f}</td>"
        f"<td>{s.wall_ms_median:.1f}</td></tr>" for k, s in rows.items())
    return f"<h2>{html.escape(title)}</h2><table>{head}{body}</table>"


def write_html(path: Path, run: RunInfo, episodes: list[EpisodeResult], png: Path,
               comparison: tuple[RunInfo, PairedBootstrap | None] | None = None) -> Path:
    """The HTML report of one run (overall, per family, per target, optional paired comparison, plot)."""
    overall = summarize(episodes)
    parts = [
        f"<h1>rac-fw eval — {html.escape(run.id)}</h1>",
        f"<p>domain <b>{html.escape(run.domain)}</b>, interface <b>{html.escape(run.interface)}</b>, "
        f"model <b>{html.escape(run.model)}</b>; {overall.episodes} episodes, harness overhead "
        f"{overall.harness_ms_per_call:.2f} ms per model call.</p>",
        _table("overall", {"all": overall}),
        _table("per family", grouped(episodes, "family")),
        _table("per target", grouped(episodes, "target")),
    ]
    if comparison is not None:
        other, boot = comparison
        if boot is None:
            parts.append(f"<h2>paired bootstrap vs {html.escape(other.id)}</h2><p>no common task</p>")
        else:
            parts.append(
                f"<h2>paired bootstrap vs {html.escape(other.id)} ({html.escape(other.interface)}, "
                f"{html.escape(other.model)})</h2><p>{boot.tasks} common tasks, {boot.resamples} resamples: "
                f"pass-rate difference {boot.difference:+.3f}, 95 % interval [{boot.low:+.3f}, {boot.high:+.3f}]</p>")
    parts.append(f'<h2>pass rate vs tokens</h2><img src="{html.escape(png.name)}" alt="pass rate vs tokens">')

    def proposals(e: EpisodeResult) -> str:
        return html.escape(" · ".join(p.status + (":" + ",".join(p.codes[:3]) if p.codes else "") for p in e.proposals))

    rows = "".join(
        f"<tr><td>{html.escape(e.task)}</td><td>{e.seed}</td><td>{e.outcome}</td><td>{int(e.first_pass)}</td>"
        f"<td>{len(e.calls)}</td><td>{e.tokens_in}</td><td>{e.tokens_out}</td><td>{e.wall_ms:.1f}</td>"
        f"<td>{proposals(e)}</td></tr>" for e in episodes)
    parts.append("<h2>episodes</h2><table><tr><th>task</th><th>seed</th><th>outcome</th><th>first</th><th>calls</th>"
                 f"<th>in</th><th>out</th><th>ms</th><th>proposals</th></tr>{rows}</table>")
    style = ("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
             "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}</style>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>rac-fw eval {html.escape(run.id)}"
                    f"</title>{style}</head><body>{''.join(parts)}</body></html>\n", encoding="utf-8")
    return path
