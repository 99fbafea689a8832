"""Validate a 10-operation plan warm: parse + every obligation (goal ≤ 10 ms), and target load.

Run: ``python benchmarks/bench_validate.py``. Prints the measured times of one run (median and best
of N warm repetitions) and the ratio to the goal; exits non-zero when the median misses the goal.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from rac_fw.contract import Action
from rac_fw.domain import load_domain
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.plan.load import parse_plan

GOAL_MS = 10.0
REPEATS = 200
PLAN = Path(__file__).resolve().parents[1] / "tests" / "plans" / "stm32h743_zephyr.yaml"


def _times(func: Callable[[], object], repeats: int = REPEATS) -> list[float]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def main() -> int:
    payload = yaml.safe_load(PLAN.read_text())
    task = payload["target"]
    assert len(payload["operations"]) == 10, "the benchmark plan must have 10 operations"
    start = time.perf_counter()
    target = load_target(task)
    cold_load = (time.perf_counter() - start) * 1e3
    domain = load_domain("firmware")
    action = Action(domain="firmware", task=task, payload=payload)
    first = time.perf_counter()
    assert domain.validate(task, action).ok
    cold_validate = (time.perf_counter() - first) * 1e3

    plan = parse_plan(payload)
    rows = {
        "load_target (warm, cached)": _times(lambda: load_target(task)),
        "parse_plan (10 ops)": _times(lambda: parse_plan(payload)),
        "obligations.check (10 ops)": _times(lambda: check(plan, target)),
        "domain.validate = parse + check": _times(lambda: domain.validate(task, action)),
    }
    print(f"plan: {PLAN.name} on {task}, {len(payload['operations'])} operations, {REPEATS} warm runs")
    print(f"  first load_target (cold in this process): {cold_load:8.3f} ms")
    print(f"  first domain.validate (imports, caches):  {cold_validate:8.3f} ms")
    for name, samples in rows.items():
        print(f"  {name:34s} median {statistics.median(samples):7.3f} ms   best {min(samples):7.3f} ms")
    median = statistics.median(rows["domain.validate = parse + check"])
    print(f"goal: validate ≤ {GOAL_MS} ms warm -> measured {median:.3f} ms ({median / GOAL_MS:.2f} of the goal)")
    return 0 if median <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
