"""Benchmark ``rac-fw plan``: warm plan → lowered → verified, and a cold command-line run.

Goals (issue: lowering and verification): a 5-operation plan goes through validate → lower → verify in
≤ 100 ms warm, and a cold ``rac-fw plan`` process finishes in ≤ 1.5 s. Prints the measured numbers and
their ratio to each goal (both measured in this one run); exits 1 when a goal is missed.

    python benchmarks/bench_plan.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.resources import data_dir

WARM_GOAL_MS = 100.0
COLD_GOAL_S = 1.5
PLAN = data_dir("examples") / "sensor_node.yaml"


def warm(repeat: int) -> tuple[float, float, dict[str, float]]:
    """Median and max of in-process pipeline runs after one warm-up, plus the median step split."""
    plan = load_plan(PLAN)
    assert len(plan.operations) == 5, "the benchmark plan must have 5 operations"
    first = run_plan(plan)
    assert first.status.value == "pass", [e.message for e in first.evidence]
    totals, steps = [], {k: [] for k in ("check", "lower", "verify")}
    for _ in range(repeat):
        start = time.perf_counter()
        result = run_plan(plan)
        totals.append((time.perf_counter() - start) * 1e3)
        for key in steps:
            steps[key].append(result.timings_ms.get(key, 0.0))
    return statistics.median(totals), max(totals), {k: statistics.median(v) for k, v in steps.items()}


def cold(repeat: int) -> float:
    """Median wall time of a fresh ``rac-fw plan PLAN --out DIR --json`` process."""
    times = []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(repeat):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "rac_fw.cli", "plan", str(PLAN), "--out", str(Path(out) / "app"), "--json"],
                capture_output=True,
                text=True,
                check=False,
            )
            times.append(time.perf_counter() - start)
            if proc.returncode != 0:
                raise SystemExit(f"rac-fw plan failed ({proc.returncode}): {proc.stdout[-400:]}{proc.stderr[-400:]}")
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50, help="warm iterations (cold runs: repeat // 10, min 3)")
    args = parser.parse_args()
    median_ms, worst_ms, split = warm(args.repeat)
    cold_s = cold(max(3, args.repeat // 10))
    print(f"plan: {PLAN.name} (5 operations, target nrf52840, framework zephyr)")
    print(
        f"warm validate→lower→verify: median {median_ms:.1f} ms, max {worst_ms:.1f} ms "
        f"(check {split['check']:.1f}, lower {split['lower']:.1f}, verify {split['verify']:.1f}) "
        f"goal ≤ {WARM_GOAL_MS:.0f} ms → {median_ms / WARM_GOAL_MS:.2f}× of goal"
    )
    print(f"cold `rac-fw plan`: median {cold_s:.2f} s, goal ≤ {COLD_GOAL_S} s → {cold_s / COLD_GOAL_S:.2f}× of goal")
    ok = median_ms <= WARM_GOAL_MS and cold_s <= COLD_GOAL_S
    print("goals met" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
