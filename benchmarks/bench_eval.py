"""Evaluation harness: Ray speedup on 2 workers and harness overhead per model call (scripted agents).

Runs the same ≥ 200 scripted episodes (default: the repairing agent on scheduling LA01–LA40 × 7 seeds,
two model calls each) locally and as Ray tasks on a local 2-CPU Ray instance, checks both give the
same results (outcome, proposals, token counts per call), and prints the wall-time speedup. Worker
start-up is excluded (one warm-up task per worker first). The harness overhead per model call is
the episode time spent neither waiting for the model nor judging, from the local run.
Goals: speedup ≥ 1.8× on 2 free cores; overhead ≤ 5 ms per call.

    python benchmarks/bench_eval.py [--domain scheduling] [--agent repairing] [--seeds 7] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from rac_fw.eval.clients import ModelOptions
from rac_fw.eval.episode import EpisodeResult
from rac_fw.eval.executor import EpisodeSpec, ModelSpec, run_local, run_ray
from rac_fw.eval.interfaces import get_interface
from rac_fw.eval.scripted import ScriptedServer


def comparable(results: list[EpisodeResult]) -> list[tuple]:
    return sorted((r.task, r.seed, r.outcome, [(c.tokens_in, c.tokens_out) for c in r.calls],
                   [(p.status, p.codes) for p in r.proposals]) for r in results)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", default="scheduling")
    parser.add_argument("--interface", default="rac")
    parser.add_argument("--agent", default="repairing")
    parser.add_argument("--seeds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    import ray

    interface = get_interface(args.domain, args.interface)
    tasks = interface.tasks()
    with ScriptedServer(interface) as server:
        model = ModelSpec("openai", args.agent, server.base_url, None)
        specs = [EpisodeSpec(args.domain, args.interface, t, s, model, 5, ModelOptions())
                 for t in tasks for s in range(args.seeds)]
        warm: list[EpisodeResult] = []
        run_local(specs[: len(tasks)], warm.append)  # caches and kernels warm in this process
        local: list[EpisodeResult] = []
        t0 = time.perf_counter()
        run_local(specs, local.append)
        local_s = time.perf_counter() - t0
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
        try:
            run_ray(specs[: args.workers * 2], warm.append)  # start and warm each worker
            remote: list[EpisodeResult] = []
            t0 = time.perf_counter()
            run_ray(specs, remote.append)
            ray_s = time.perf_counter() - t0
        finally:
            ray.shutdown()
    same = comparable(local) == comparable(remote)
    calls = sum(len(r.calls) for r in local)
    per_call = [r.harness_ms / len(r.calls) for r in local if r.calls]
    print(f"{len(specs)} episodes ({args.domain}:{args.interface}, scripted {args.agent}), {calls} model calls; "
          f"machine CPUs {os.cpu_count()}, load {os.getloadavg()[0]:.1f}")
    print(f"local:            {local_s:7.2f} s")
    print(f"ray, {args.workers} workers:   {ray_s:7.2f} s   speedup {local_s / ray_s:.2f}x   (goal ≥ 1.8x)")
    print(f"same results:     {same}")
    print(f"harness overhead: {sum(r.harness_ms for r in local) / calls:.3f} ms per model call (mean), "
          f"median per episode {statistics.median(per_call):.3f} ms   (goal ≤ 5 ms)")
    if not same:
        raise SystemExit("ray and local results differ")


if __name__ == "__main__":
    main()
