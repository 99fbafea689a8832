"""Validation time against the number of operations, for plans whose every operation is violated.

Run: ``python benchmarks/bench_validation.py``. Each plan repeats one operation 1, 4, 16 and 64 times in the
form that makes validation heaviest: every copy is a violation whose relaxations must each be proven
(``obligations.check`` with the promise) — ``core_clock`` at 1000 MHz (each copy over the limit, all but the
first a second clock request), ``pwm_fixed`` on one LED (each copy a pin conflict offering other LEDs and a
new pin) and ``uart_print`` at an unreachable baud rate on the console. Times are CPU seconds (best of
``REPEATS``) of ``obligations.check`` in one process, after one warm-up plan. Goals: 64 operations ≤ 1 s and
growth no worse than linear (each step of ×4 operations costs at most ×4 ``SLACK``); exits non-zero otherwise.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.plan.load import parse_plan

SIZES = (1, 4, 16, 64)
REPEATS = 3
GOAL_S = 1.0
SLACK = 1.25
"""Measurement noise allowed on the ×4 ratio (the machine is shared)."""

KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "core_clock": ("stm32f407", {"op": "core_clock", "mhz": 1000}),
    "pwm_fixed": ("stm32f407", {"op": "pwm_fixed", "output": "led0", "period_us": 1000, "duty_percent": 25}),
    "uart_print": ("stm32f407", {"op": "uart_print", "message": "tick", "baud": 3_000_000, "repeat_interval_ms": 100}),
}


def _plan(target: str, op: dict[str, Any], count: int, named: bool) -> dict[str, Any]:
    return {"target": target, "operations": [dict(op, **({"name": f"op{i}"} if named else {})) for i in range(count)]}


def _seconds(data: dict[str, Any]) -> tuple[float, int, int]:
    plan = parse_plan(data)
    target = load_target(data["target"])
    best, found = float("inf"), []
    for _ in range(REPEATS):
        start = time.process_time()
        found = check(plan, target)
        best = min(best, time.process_time() - start)
    return best, len(found), sum(len(e.relaxations) for e in found)


def main() -> int:
    _seconds(_plan("stm32f407", KINDS["core_clock"][1], 2, False))  # imports, fact loads, caches
    ok = True
    print(f"obligations.check CPU time, best of {REPEATS}; goal: 64 operations <= {GOAL_S} s, x4 ops <= x{4 * SLACK}")
    for kind, (target, op) in KINDS.items():
        for named in (False, True):
            rows = [(n, *_seconds(_plan(target, op, n, named))) for n in SIZES]
            label = f"{kind}{' (named)' if named else ''}"
            cells = []
            for i, (n, seconds, violations, relaxations) in enumerate(rows):
                ratio = f" x{seconds / rows[i - 1][1]:.1f}" if i else ""
                kept = f"({violations} violations, {relaxations} kept)"
                cells.append(f"{n:>2} ops {seconds * 1e3:7.1f} ms{ratio:6s} {kept}")
            growth = [rows[i][1] / rows[i - 1][1] for i in range(2, len(rows))]  # 4→16, 16→64 (1 op is all overhead)
            last = rows[-1][1]
            fine = last <= GOAL_S and all(g <= 4 * SLACK for g in growth)
            ok &= fine
            print(f"{label:22s} " + " | ".join(cells) + f"  {'ok' if fine else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
