"""Runtime overhead: the same logic actions through a direct five-call driver and through the runtime.

Asserts identical artifacts, verdicts and serialized feedback, then prints the median per-turn
overhead (runtime − direct, paired) in ms and the runtime/direct ratio. Goal: median overhead ≤ 0.05 ms.

    python benchmarks/bench_runtime_overhead.py [--pairs 400]
"""

from __future__ import annotations

import argparse
import statistics
import time

from rac_fw.contract import Action
from rac_fw.domain import load_domain
from rac_fw.domains.logic.calibrate import correct_payload, flipped_payload
from rac_fw.domains.logic.tasks import get_task
from rac_fw.runtime import Episode


def direct(domain, task, action, seed=0):
    """The five operations in order, no runtime."""
    validation = domain.validate(task, action)
    realization = domain.realize(task, validation.action, seed)
    verification = domain.verify(task, validation.action, realization)
    feedback = domain.feedback(task, validation, verification)
    feedback.artifact_hash = realization.artifact_hash
    return feedback


def through_runtime(domain, task, action, seed=0):
    return Episode(domain, task, budget=1, seed=seed).submit(action)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=400)
    args = parser.parse_args()
    domain = load_domain("logic")
    actions = []
    for name in domain.tasks():
        task = get_task(name)
        actions.append(Action(domain="logic", task=name, payload=correct_payload(task)))
        actions.append(Action(domain="logic", task=name, payload=flipped_payload(task, task.outputs[0], 0)))
    for action in actions:  # warm caches (SymPy, pydantic) outside the measurement
        direct(domain, action.task, action)
        through_runtime(domain, action.task, action)
    clock = time.perf_counter
    d_times, r_times, deltas = [], [], []
    for i in range(args.pairs):
        action = actions[i % len(actions)]
        order = (direct, through_runtime) if i % 2 == 0 else (through_runtime, direct)
        results, times = {}, {}
        for fn in order:
            t0 = clock()
            results[fn.__name__] = fn(domain, action.task, action)
            times[fn.__name__] = (clock() - t0) * 1e3
        a, b = results["direct"], results["through_runtime"]
        assert a.model_dump_json() == b.model_dump_json(), f"divergence on {action.task}"
        d_times.append(times["direct"])
        r_times.append(times["through_runtime"])
        deltas.append(times["through_runtime"] - times["direct"])
    md, mr, mo = statistics.median(d_times), statistics.median(r_times), statistics.median(deltas)
    print(f"pairs: {args.pairs} (identical artifacts, verdicts and serialized feedback in every pair)")
    print(f"median direct turn:   {md:.4f} ms")
    print(f"median runtime turn:  {mr:.4f} ms")
    print(f"median overhead:      {mo:+.4f} ms   (goal ≤ 0.05 ms)")
    print(f"ratio runtime/direct: {mr / md:.3f}")


if __name__ == "__main__":
    main()
