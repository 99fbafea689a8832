"""Evaluation executors with a model that takes seconds: sequential, a local thread pool, and Ray actors.

Runs the same scripted episodes (default: the repairing agent, two model calls each, on scheduling
LA01–LA10 × 2 seeds = 20 episodes) against the scripted server with a model latency drawn from 1–3 s per
call, four ways: locally one at a time, locally on a thread pool, on 2 warmed Ray actors running one
episode at a time each, and on 2 Ray actors running several each. Every way must give the same results
(outcome, proposals, token counts per call); the speed-up of each over the sequential run is printed.
Ray's start-up and the actors' warm-up are excluded (the pool is opened, and warmed, before timing), as
a long evaluation amortizes them. Goal (issue 28): Ray on 2 workers ≥ 1.6× the sequential run on 2 cores;
the local thread pool should do as well without Ray. The machine's load is printed with the numbers.

    python benchmarks/bench_eval.py [--tasks 10] [--seeds 2] [--latency 1 3] [--workers 2] [--threads 4]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

from rac_fw.eval.clients import ModelOptions
from rac_fw.eval.episode import EpisodeResult
from rac_fw.eval.executor import EpisodeSpec, ModelSpec, RayPool, run_local
from rac_fw.eval.interfaces import get_interface
from rac_fw.eval.scripted import ScriptedServer


def comparable(results: list[EpisodeResult]) -> list[tuple]:
    return sorted((r.task, r.seed, r.outcome, [(c.tokens_in, c.tokens_out) for c in r.calls],
                   [(p.status, p.codes) for p in r.proposals]) for r in results)


def timed(run: Callable[[Callable[[EpisodeResult], None]], None]) -> tuple[float, list[EpisodeResult]]:
    results: list[EpisodeResult] = []
    t0 = time.perf_counter()
    run(results.append)
    return time.perf_counter() - t0, results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", default="scheduling")
    parser.add_argument("--interface", default="rac")
    parser.add_argument("--agent", default="repairing")
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--latency", type=float, nargs=2, default=(1.0, 3.0))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    interface = get_interface(args.domain, args.interface)
    tasks = interface.tasks()[: args.tasks]
    with ScriptedServer(interface, latency_s=tuple(args.latency)) as server:  # type: ignore[arg-type]
        model = ModelSpec("openai", args.agent, server.base_url, None)
        specs = [EpisodeSpec(args.domain, args.interface, t, s, model, 5, ModelOptions())
                 for t in tasks for s in range(args.seeds)]
        with ScriptedServer(interface) as fast:  # warm this process's caches without the latency
            warm_model = ModelSpec("openai", args.agent, fast.base_url, None)
            run_local([EpisodeSpec(args.domain, args.interface, t, 0, warm_model, 5, ModelOptions())
                       for t in tasks], lambda _r: None, threads=1)
        rows: list[tuple[str, float, list[EpisodeResult]]] = []
        rows.append(("local, 1 thread", *timed(lambda done: run_local(specs, done, threads=1))))
        rows.append((f"local, {args.threads} threads", *timed(lambda done: run_local(specs, done,
                                                                                      threads=args.threads))))
        for threads in (1, args.threads):
            with RayPool([args.domain], workers=args.workers, threads=threads) as pool:
                rows.append((f"ray, {args.workers} actors × {threads} thread(s)", *timed(lambda d, p=pool: p.run(specs,
                                                                                                                d))))
    calls = sum(len(r.calls) for r in rows[0][2])
    print(f"{len(specs)} episodes ({args.domain}:{args.interface}, scripted {args.agent}), {calls} model calls, "
          f"latency {args.latency[0]:g}–{args.latency[1]:g} s per call; CPUs {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.1f}")
    base = rows[0][1]
    reference = comparable(rows[0][2])
    for label, seconds, results in rows:
        print(f"{label:<28} {seconds:7.2f} s   speed-up {base / seconds:5.2f}x   same results: "
              f"{comparable(results) == reference}")
    ray_two = next(s for label, s, _ in rows if label.startswith("ray") and "× 1 thread" in label)
    print(f"Ray on {args.workers} workers vs sequential: {base / ray_two:.2f}x (goal ≥ 1.6x)")
    if any(comparable(results) != reference for _, _, results in rows):
        raise SystemExit("the executors' results differ")


if __name__ == "__main__":
    main()
