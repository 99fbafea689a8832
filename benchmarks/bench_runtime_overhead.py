"""Runtime overhead in every domain: the same actions through a direct five-call driver and the runtime.

For each registered domain that has a RAC interface (logic, scheduling, firmware, and any plugin
domain that registers one, e.g. PCB), the actions are the interface's reference and flawed actions
on a spread of its tasks. Each pair runs both drivers (order alternating) and asserts identical
artifact hashes, verdicts and serialized feedback; the script prints, per domain, the median per-turn
overhead (runtime − direct, paired) with a 95 % bootstrap interval of that median, and the ratio.

    python benchmarks/bench_runtime_overhead.py [--pairs 200] [--tasks 6] [--domains logic,firmware]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from rac_fw.contract import Action, Feedback
from rac_fw.domain import Domain, domain_names, load_domain
from rac_fw.eval.interfaces import interfaces
from rac_fw.runtime import Episode


def direct(domain: Domain, task: str, action: Action, seed: int = 0) -> Feedback:
    """The five operations in order, no runtime."""
    validation = domain.validate(task, action)
    verification, artifact_hash = None, None
    if validation.ok:
        realization = domain.realize(task, validation.action, seed)
        verification = domain.verify(task, validation.action, realization)
        artifact_hash = realization.artifact_hash
    feedback = domain.feedback(task, validation, verification)
    feedback.artifact_hash = artifact_hash
    return feedback


def through_runtime(domain: Domain, task: str, action: Action, seed: int = 0) -> Feedback:
    return Episode(domain, task, budget=1, seed=seed).submit(action)


def actions_for(name: str, per_domain: int) -> list[Action]:
    interface = interfaces()[(name, "rac")]()
    tasks = interface.tasks()
    step = max(1, len(tasks) // per_domain)
    chosen = [t for t in tasks[::step] if "baremetal" not in t][:per_domain]  # no compile/QEMU in the loop
    out = []
    for task in chosen:
        for scripted in (interface.reference(task), interface.flawed(task)):
            out.append(Action(domain=name, task=task, payload=scripted.arguments))
    return out


def median_interval(values: list[float], resamples: int = 2000) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    data = np.array(values)
    medians = np.median(data[rng.integers(0, len(data), size=(resamples, len(data)))], axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return float(low), float(high)


def bench_domain(name: str, pairs: int, per_domain: int) -> None:
    domain = load_domain(name)
    actions = actions_for(name, per_domain)
    for action in actions:  # warm caches (SymPy, numba, pydantic, catalogs) outside the measurement
        direct(domain, action.task, action)
        through_runtime(domain, action.task, action)
    clock = time.perf_counter
    d_times, r_times, deltas = [], [], []
    for i in range(pairs):
        action = actions[i % len(actions)]
        order = (direct, through_runtime) if i % 2 == 0 else (through_runtime, direct)
        results, times = {}, {}
        for fn in order:
            t0 = clock()
            results[fn.__name__] = fn(domain, action.task, action)
            times[fn.__name__] = (clock() - t0) * 1e3
        a, b = results["direct"], results["through_runtime"]
        assert a.artifact_hash == b.artifact_hash and a.verdicts == b.verdicts, f"{name}: divergence on {action.task}"
        assert a.model_dump_json() == b.model_dump_json(), f"{name}: feedback differs on {action.task}"
        d_times.append(times["direct"])
        r_times.append(times["through_runtime"])
        deltas.append(times["through_runtime"] - times["direct"])
    md, mr, mo = statistics.median(d_times), statistics.median(r_times), statistics.median(deltas)
    low, high = median_interval(deltas)
    print(f"{name:<11} pairs {pairs:>4} over {len(actions)} actions (identical artifacts, verdicts, feedback): "
          f"direct {md:.4f} ms, runtime {mr:.4f} ms, overhead median {mo:+.4f} ms [95% {low:+.4f}, {high:+.4f}], "
          f"ratio {mr / md:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=6, help="tasks per domain (reference + flawed action each)")
    parser.add_argument("--domains", default=None, help="comma-separated (default: every domain with a RAC interface)")
    args = parser.parse_args()
    available = [d for d in domain_names() if (d, "rac") in interfaces()]
    chosen = args.domains.split(",") if args.domains else available
    missing = sorted(set(domain_names()) - set(available))
    if missing:
        print(f"domains without a RAC interface in the eval registry (not measured): {', '.join(missing)}")
    for name in chosen:
        bench_domain(name, args.pairs, args.tasks)


if __name__ == "__main__":
    main()
