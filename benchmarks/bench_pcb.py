"""PCB realize speed per task category. Goal (issue 18): median realize ≤ 2 s per task on 2 cores.

Every task's reference bundle (repair tasks: the start bundle, which is what an agent submits first)
is validated, realized with seed 0 and verified; it prints the one-off numba compile/load time, then
per category the number of tasks, the clean passes, and the median / 90th percentile / maximum
realize and verify times, and the ratio of the median to the 2 s goal.

    python benchmarks/bench_pcb.py [--category routing] [--seed 0]
"""

from __future__ import annotations

import argparse
import statistics
import time

from rac_fw.contract import Action
from rac_fw.domains.pcb.domain import PcbDomain
from rac_fw.domains.pcb.tasks import all_tasks

GOAL_S = 2.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--category", action="append", choices=["routing", "placement", "combined", "repair"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    domain = PcbDomain()
    t0 = time.perf_counter()
    warm = "route_fanout_09"
    v = domain.validate(warm, Action(domain="pcb", task=warm, payload=all_tasks()[warm].reference))
    domain.realize(warm, v.action, 0)
    print(f"warm-up (numba kernel compile or cache load): {time.perf_counter() - t0:.2f} s")
    rows: dict[str, list[tuple[float, float, bool]]] = {}
    for name, task in all_tasks().items():
        if args.category and task.category not in args.category:
            continue
        payload = task.start if task.start is not None else task.reference
        validation = domain.validate(name, Action(domain="pcb", task=name, payload=payload))
        assert validation.ok, (name, validation.evidence)
        t1 = time.perf_counter()
        real = domain.realize(name, validation.action, args.seed)
        t2 = time.perf_counter()
        ok = domain.verify(name, validation.action, real).ok
        t3 = time.perf_counter()
        rows.setdefault(task.category, []).append((t2 - t1, t3 - t2, ok))
    print(f"{'category':<10}{'tasks':>6}{'clean':>7}{'median s':>10}{'p90 s':>8}{'max s':>8}{'verify ms':>11}"
          f"{'median/goal':>13}")
    for cat, vals in rows.items():
        realize = sorted(r for r, _, _ in vals)
        med = statistics.median(realize)
        p90 = realize[min(len(realize) - 1, int(0.9 * len(realize)))]
        ver = statistics.median(v for _, v, _ in vals) * 1e3
        print(f"{cat:<10}{len(vals):>6}{sum(ok for _, _, ok in vals):>7}{med:>10.3f}{p90:>8.3f}{realize[-1]:>8.3f}"
              f"{ver:>11.1f}{med / GOAL_S:>13.2f}")
    print("(repair rows realize the infeasible start bundle, so their clean count is expected to be 0)")


if __name__ == "__main__":
    main()
