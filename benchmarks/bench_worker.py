"""What the per-request memory ceiling costs: one turn in process vs the same turn in a bounded worker.

The MCP server runs every turn in a worker process forked from a warmed fork server
(``rac_fw.mcp.worker``); this prints, per domain, the median wall time of one turn both ways (after the
fork server is up) and the difference, i.e. the per-turn price of the ceiling on this machine.

    python benchmarks/bench_worker.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import yaml

from rac_fw.contract import Action
from rac_fw.domain import load_domain
from rac_fw.mcp import worker
from rac_fw.resources import data_dir
from rac_fw.runtime import TurnRecord, run_turn


def cases() -> list[tuple[str, str, dict[str, object]]]:
    plan = yaml.safe_load((data_dir("examples") / "sensor_node.yaml").read_text())
    return [
        ("logic", "half_adder", {"outputs": {"sum": [1, 2], "carry": [3]}}),
        ("firmware", str(plan.pop("target")), plan),
        ("scheduling", "la01", {"priority": list(range(10))}),
    ]


def median_ms(turn: Callable[..., TurnRecord], domain: str, task: str, action: Action, repeat: int) -> float:
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        record = turn(load_domain(domain), task, action, 0, i + 1)
        times.append((time.perf_counter() - start) * 1e3)
        assert record.feedback.domain == domain
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    worker.start()
    worker.call(time.monotonic)  # wait for the fork server's warm-up
    for domain, task, payload in cases():
        action = Action(domain=domain, task=task, payload=payload)
        local = median_ms(run_turn, domain, task, action, args.repeat)
        bounded = median_ms(worker.run_turn_bounded, domain, task, action, args.repeat)
        print(f"{domain:<11} in process {local:8.1f} ms   bounded worker {bounded:8.1f} ms   "
              f"ceiling costs {bounded - local:+8.1f} ms per turn")


if __name__ == "__main__":
    main()
