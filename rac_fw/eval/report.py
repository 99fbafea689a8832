"""Reports over stored runs: pass rates with their unknown range and bootstrap interval, quality, costs,
groups, paired comparisons, plots.

* pass rate ``P/N`` with the range ``[P/N, (P+U)/N]`` — U episodes could not be decided (model
  unreachable, a tool missing), so the true rate lies in that range — and a 95 % bootstrap interval
  over *tasks* (5,000 resamples, seeds averaged within a task), as the paper reports;
* first-proposal pass rate; CPR (the share of the task's constraints the last judged proposal holds,
  averaged over episodes); model calls, input/output tokens and wall time per episode;
* for a domain with a quality bar (scheduling), the pass rate *is* the quality-pass rate (QPR: valid and
  makespan ≤ 1.25 × C*), reported with the first-proposal QPR, the valid rate and the mean makespan and gap;
* the same per family and per target;
* a paired bootstrap of the difference in pass rate between two runs over their shared tasks, with a
  warning when fewer than ``MIN_SHARED_TASKS`` are shared (or none: then no interval at all);
* a PNG of pass rate against mean tokens per episode: one series (one legend entry, its own colour and
  marker) per model × interface, bootstrap error bars, and runs at identical coordinates spread apart
  so none hides another; an HTML page holding all of it.
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
#: Below this many shared tasks a paired comparison carries a warning.
MIN_SHARED_TASKS = 10


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.fmean(values) if values else 0.0


def _per_task(episodes: list[EpisodeResult]) -> dict[str, float]:
    by_task: dict[str, list[float]] = defaultdict(list)
    for e in episodes:
        by_task[e.task].append(1.0 if e.outcome == "pass" else 0.0)
    return {t: statistics.fmean(v) for t, v in by_task.items()}


def _percentile_interval(values: np.ndarray, resamples: int, seed: int, level: float) -> tuple[float, float]:
    """The ``level`` interval of the mean of ``values`` under resampling with replacement."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(values), size=(resamples, len(values)))
    means = values[picks].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_pass_interval(episodes: list[EpisodeResult], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0,
                            level: float = 0.95) -> tuple[float, float]:
    """95 % interval of the pass rate, resampling tasks (seeds averaged within a task)."""
    rates = _per_task(episodes)
    if not rates:
        return (0.0, 0.0)
    return _percentile_interval(np.array(list(rates.values())), resamples, seed, level)


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
    cpr: float
    """Constraint pass rate: the mean share of constraints held by each episode's last judged proposal."""
    pass_ci: tuple[float, float]
    valid: int
    first_valid: int
    graded: bool
    """The domain grades accepted proposals (pass = QPR): valid/first_valid and the metrics mean something."""
    metrics_mean: dict[str, float]
    extra_calls: int
    lookups_mean: float

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
        doc = {**asdict(self), "pass_rate": self.pass_rate, "pass_range": list(self.pass_range),
               "first_pass_rate": self.first_pass_rate, "pass_ci": list(self.pass_ci)}
        if self.graded:
            n = self.episodes or 1
            doc["quality"] = {"qpr": self.pass_rate, "first_qpr": self.first_pass_rate, "valid_rate": self.valid / n,
                              "first_valid_rate": self.first_valid / n, **{f"{k}_mean": v for k, v in
                                                                            self.metrics_mean.items()}}
        return doc


def summarize(episodes: list[EpisodeResult]) -> Summary:
    n = len(episodes)
    calls = sum(len(e.calls) for e in episodes)
    rates = [r for e in episodes if (r := e.constraint_rate) is not None]
    graded = any(p.quality is not None for e in episodes for p in e.proposals)
    keys = sorted({k for e in episodes for k in e.metrics})
    return Summary(
        episodes=n,
        passed=sum(e.outcome == "pass" for e in episodes),
        unknown=sum(e.outcome == "unknown" for e in episodes),
        first_pass=sum(e.first_pass for e in episodes),
        calls_mean=calls / n if n else 0.0,
        tokens_in_mean=_mean(e.tokens_in for e in episodes),
        tokens_out_mean=_mean(e.tokens_out for e in episodes),
        wall_ms_median=statistics.median(e.wall_ms for e in episodes) if episodes else 0.0,
        harness_ms_per_call=sum(e.harness_ms for e in episodes) / calls if calls else 0.0,
        cpr=sum(rates) / n if n else 0.0,
        pass_ci=bootstrap_pass_interval(episodes),
        valid=sum(e.valid for e in episodes),
        first_valid=sum(e.first_valid for e in episodes),
        graded=graded,
        metrics_mean={k: _mean(e.metrics[k] for e in episodes if k in e.metrics) for k in keys},
        extra_calls=sum(e.extra_calls for e in episodes),
        lookups_mean=_mean(e.lookups for e in episodes),
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
    """Mean pass rate of run A minus run B over the shared tasks."""
    low: float
    high: float
    resamples: int


def paired_bootstrap(a: list[EpisodeResult], b: list[EpisodeResult], resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = 0, level: float = 0.95) -> PairedBootstrap | None:
    """Interval of pass(A) − pass(B), resampling the shared tasks with replacement (None: no shared task)."""
    rate_a, rate_b = _per_task(a), _per_task(b)
    common = sorted(set(rate_a) & set(rate_b))
    if not common:
        return None
    diffs = np.array([rate_a[t] - rate_b[t] for t in common])
    low, high = _percentile_interval(diffs, resamples, seed, level)
    return PairedBootstrap(len(common), float(diffs.mean()), low, high, resamples)


@dataclass(frozen=True)
class Comparison:
    """A paired comparison against another stored run, with what makes it weak said out loud."""

    against: RunInfo
    bootstrap: PairedBootstrap | None
    warning: str | None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"against": self.against.id, "warning": self.warning}
        if self.bootstrap is not None:
            doc.update(asdict(self.bootstrap))
        return doc


def comparison_of(run: RunInfo, episodes: list[EpisodeResult], other: RunInfo,
                  other_episodes: list[EpisodeResult]) -> Comparison:
    boot = paired_bootstrap(episodes, other_episodes)
    warning = None
    if boot is None:
        warning = (f"runs {run.id} and {other.id} share no task: there is nothing to compare "
                   f"({len(_per_task(episodes))} vs {len(_per_task(other_episodes))} tasks)")
    elif boot.tasks < MIN_SHARED_TASKS:
        warning = (f"only {boot.tasks} shared task(s) (fewer than {MIN_SHARED_TASKS}): the interval "
                   f"[{boot.low:+.3f}, {boot.high:+.3f}] resamples too few tasks to mean much")
    if run.domain != other.domain:
        warning = f"{warning + '; ' if warning else ''}the runs are on different domains ({run.domain}, {other.domain})"
    return Comparison(other, boot, warning)


#: Marker shapes cycled with the colours so series stay distinguishable beyond ten.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def _spread(xs: list[float], ys: list[float], log: bool) -> list[float]:
    """x positions with points at identical coordinates moved apart (±4 % steps on a log axis, else of the
    axis span), centred on the true value, so none hides another."""
    groups: dict[tuple[float, float], list[int]] = defaultdict(list)
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        groups[(round(x, 6), round(y, 6))].append(i)
    span = (max(xs) - min(xs)) or max(1.0, abs(xs[0])) if xs else 1.0
    out = list(xs)
    for members in groups.values():
        for rank, i in enumerate(members):
            offset = rank - (len(members) - 1) / 2
            out[i] = xs[i] * (1.04 ** offset) if log else xs[i] + offset * 0.04 * span
    return out


@dataclass(frozen=True)
class PlotPoint:
    """One run in the plot: x as drawn (spread apart from identical points), pass rate and its interval."""

    x: float
    tokens: float
    y: float
    low: float
    high: float


def plot_series(runs: list[tuple[str, str, list[EpisodeResult]]]) -> dict[str, list[PlotPoint]]:
    """The plot's series: one per model × interface (several runs of one series — other seeds or task
    sets — stay one legend entry), each point with its 95 % bootstrap interval over tasks."""
    flat: list[tuple[str, Summary]] = [(f"{model} · {interface}", summarize(episodes))
                                       for model, interface, episodes in runs if episodes]
    xs = [s.tokens_in_mean + s.tokens_out_mean for _, s in flat]
    ys = [s.pass_rate for _, s in flat]
    placed = _spread(xs, ys, bool(xs) and all(x > 0 for x in xs))
    series: dict[str, list[PlotPoint]] = defaultdict(list)
    for i, (label, s) in enumerate(flat):
        series[label].append(PlotPoint(placed[i], xs[i], ys[i], s.pass_ci[0], s.pass_ci[1]))
    return dict(series)


def plot_pass_vs_tokens(runs: list[tuple[str, str, list[EpisodeResult]]], path: Path) -> Path:
    """PNG of :func:`plot_series`: each series its own colour and marker, error bars the bootstrap interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = plot_series(runs)
    log = bool(series) and all(p.tokens > 0 for points in series.values() for p in points)
    fig, ax = plt.subplots(figsize=(7.2, 4.6), dpi=110)
    colours = plt.get_cmap("tab10")
    for k, (label, points) in enumerate(series.items()):
        ax.errorbar([p.x for p in points], [p.y for p in points],
                    yerr=[[p.y - p.low for p in points], [p.high - p.y for p in points]],
                    fmt=_MARKERS[(k // 10) % len(_MARKERS)], color=colours(k % 10), capsize=3, markersize=6,
                    label=label, alpha=0.9)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("tokens per episode (mean, in + out)")
    ax.set_ylabel("pass rate (95 % bootstrap interval over tasks)")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    if series:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title("pass rate vs tokens (model × interface)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _table(title: str, rows: dict[str, Summary]) -> str:
    graded = any(s.graded for s in rows.values())
    head = ("<tr><th>group</th><th>N</th><th>pass</th><th>range</th><th>95 % CI</th><th>first-proposal</th>"
            "<th>CPR</th><th>calls</th><th>tokens in</th><th>tokens out</th><th>wall ms (median)</th>"
            + ("<th>valid</th><th>makespan</th><th>gap</th>" if graded else "") + "</tr>")

    def quality(s: Summary) -> str:
        if not graded:
            return ""
        gap = s.metrics_mean.get("gap")
        return (f"<td>{s.valid}</td><td>{s.metrics_mean.get('makespan', 0):.0f}</td>"
                f"<td>{'-' if gap is None else f'{gap:.1%}'}</td>")

    body = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{s.episodes}</td><td>{s.pass_rate:.3f}</td>"
        f"<td>[{s.pass_range[0]:.3f}, {s.pass_range[1]:.3f}]</td><td>[{s.pass_ci[0]:.3f}, {s.pass_ci[1]:.3f}]</td>"
        f"<td>{s.first_pass_rate:.3f}</td><td>{s.cpr:.3f}</td>"
        f"<td>{s.calls_mean:.2f}</td><td>{s.tokens_in_mean:.0f}</td><td>{s.tokens_out_mean:.0f}</td>"
        f"<td>{s.wall_ms_median:.1f}</td>{quality(s)}</tr>" for k, s in rows.items())
    note = "<p>pass = QPR: valid and makespan ≤ 1.25 × the known optimum.</p>" if graded else ""
    return f"<h2>{html.escape(title)}</h2>{note}<table>{head}{body}</table>"


def write_html(path: Path, run: RunInfo, episodes: list[EpisodeResult], png: Path,
               comparison: Comparison | None = None) -> Path:
    """The HTML report of one run (overall, per family, per target, optional paired comparison, plot)."""
    overall = summarize(episodes)
    parts = [
        f"<h1>rac-fw eval — {html.escape(run.id)}</h1>",
        f"<p>domain <b>{html.escape(run.domain)}</b>, interface <b>{html.escape(run.interface)}</b>, "
        f"model <b>{html.escape(run.model)}</b>; {overall.episodes} episodes, harness overhead "
        f"{overall.harness_ms_per_call:.2f} ms per model call; {overall.extra_calls} extra proposal(s) answered "
        "“one action per call”.</p>",
        _table("overall", {"all": overall}),
        _table("per family", grouped(episodes, "family")),
        _table("per target", grouped(episodes, "target")),
    ]
    if comparison is not None:
        other, boot = comparison.against, comparison.bootstrap
        title = (f"<h2>paired bootstrap vs {html.escape(other.id)} ({html.escape(other.interface)}, "
                 f"{html.escape(other.model)})</h2>")
        warning = f"<p><b>warning:</b> {html.escape(comparison.warning)}</p>" if comparison.warning else ""
        result = "" if boot is None else (
            f"<p>{boot.tasks} shared tasks, {boot.resamples} resamples: pass-rate difference {boot.difference:+.3f}, "
            f"95 % interval [{boot.low:+.3f}, {boot.high:+.3f}]</p>")
        parts.append(title + warning + result)
    parts.append(f'<h2>pass rate vs tokens</h2><img src="{html.escape(png.name)}" alt="pass rate vs tokens">')

    def proposals(e: EpisodeResult) -> str:
        return html.escape(" · ".join(p.status + (":" + ",".join(p.codes[:3]) if p.codes else "")
                                      + ("" if p.quality is None else (" (quality met)" if p.quality else
                                                                        " (quality missed)")) for p in e.proposals))

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
