"""Scheduling backend speed: raw evaluations per second on LA26 and the bounded search's own rate.

Run: ``python benchmarks/bench_scheduling.py``. Prints measured numbers (goal: ≥ 50,000 evaluations/s
on LA26; bounded search ≤ 0.5 s per instance); it asserts nothing, the numbers are the result.
"""

from __future__ import annotations

import time

import numpy as np

from rac_fw.domains.scheduling.backends.bounded import BoundedBackend, PairArcs
from rac_fw.domains.scheduling.backends.kernels import evaluate_many, giffler_thompson
from rac_fw.domains.scheduling.instance import LAWRENCE, load_benchmark
from rac_fw.domains.scheduling.relations import Relations

GOAL_EVALS_PER_S = 50_000


def raw_rate(task: str, repeats: int = 200_000) -> float:
    """Evaluations/s of one machine order (the longest-path pass every candidate costs)."""
    inst = load_benchmark(task)
    arr = inst.arrays
    n = len(inst.operations)
    arcs = PairArcs.of(n, [])
    pred, succ = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    giffler_thompson(arr.duration, arr.machine, arr.job, arr.job_first, arr.job_len,
                     np.arange(inst.num_jobs, dtype=np.int64), arcs.pin_ptr, arcs.pout_ptr, arcs.pout_dst,
                     inst.num_machines, pred, succ, True)
    args = (arr.duration, arr.job_pred, arr.job_succ, pred, succ, arcs.pin_ptr, arcs.pout_ptr, arcs.pout_dst)
    evaluate_many(*args, 10)  # load / compile
    t0 = time.perf_counter()
    evaluate_many(*args, repeats)
    return repeats / (time.perf_counter() - t0)


def search_rate(task: str) -> tuple[float, float, int]:
    """(evaluations/s inside the bounded search, its wall seconds, evaluations) for the control action."""
    inst = load_benchmark(task)
    backend = BoundedBackend()
    relations = Relations(priority=tuple(range(inst.num_jobs)), before=(), backend=None)
    backend.solve(inst, relations, 0)  # load / compile
    t0 = time.perf_counter()
    result = backend.solve(inst, relations, 0)
    seconds = time.perf_counter() - t0
    evals = int(result.stats["evaluations"])
    return evals / seconds, seconds, evals


def main() -> None:
    rate = raw_rate("la26")
    print(f"LA26 raw evaluation: {rate:,.0f} evals/s (goal ≥ {GOAL_EVALS_PER_S:,}: {rate / GOAL_EVALS_PER_S:.1f}×)")
    rate, seconds, evals = search_rate("la26")
    print(f"LA26 bounded search: {evals} evaluations in {seconds * 1e3:.1f} ms = {rate:,.0f} evals/s "
          f"(goal ≥ {GOAL_EVALS_PER_S:,}: {rate / GOAL_EVALS_PER_S:.1f}×)")
    worst = max(LAWRENCE, key=lambda t: search_rate(t)[1])
    print(f"slowest LA instance: {worst}, {search_rate(worst)[1] * 1e3:.1f} ms (goal ≤ 500 ms)")


if __name__ == "__main__":
    main()
