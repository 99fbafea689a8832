"""Fact-pack loading speed and observation size, per target. Goals: warm load ≤ 20 ms, summary ≤ 8 KB.

For every pack it prints:
- cold: first ``load_target`` in a fresh interpreter (imports done; includes the one-time pydantic
  schema build and reading board.yaml/chip.yaml/pins.json/svd.json);
- cold2: first load of this pack in a fresh interpreter after another pack was loaded (schema built);
- rebuild: median of re-reading and re-validating the pack in a warm process (the uncached path);
- warm: median of the cached ``load_target`` call (what every later caller pays);
- summary: compact JSON size of ``summary(target)`` in bytes, and the time to compute it;
- svd parse (``--svd``): parsing the source SVD with cmsis-svd, i.e. what run time never does.

    python benchmarks/bench_facts.py [--repeat 50] [--svd ../shared/svd/stm32f407.svd]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rac_fw.domains.firmware.facts import load
from rac_fw.domains.firmware.facts.observe import summary

_COLD = """
import time, sys
from rac_fw.domains.firmware.facts.load import load_target
if len(sys.argv) > 2:
    load_target(sys.argv[2])
t = time.perf_counter(); load_target(sys.argv[1]); print((time.perf_counter() - t) * 1000)
"""


def _cold_ms(target_id: str, warm_with: str | None = None) -> float:
    args = [sys.executable, "-c", _COLD, target_id] + ([warm_with] if warm_with else [])
    return float(subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip())


def _median_ms(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--svd", type=Path, default=None, help="also time parsing this SVD with cmsis-svd")
    args = parser.parse_args()
    ids = load.target_ids()
    print(f"{'target':<15} {'cold ms':>8} {'cold2 ms':>9} {'rebuild ms':>11} {'warm ms':>9} "
          f"{'summary B':>10} {'summary ms':>11}")
    worst_warm = worst_rebuild = 0.0
    root = load.boards_root()
    for target_id in ids:
        other = next(i for i in ids if i != target_id)
        cold, cold2 = _cold_ms(target_id), _cold_ms(target_id, warm_with=other)
        rebuild = _median_ms(
            lambda tid=target_id: (load._svd_facts.cache_clear(), load.load_pack(root / tid)), args.repeat
        )
        target = load.load_target(target_id)
        warm = _median_ms(lambda tid=target_id: load.load_target(tid), args.repeat)
        size = len(json.dumps(summary(target), separators=(",", ":")).encode())
        summary_ms = _median_ms(lambda t=target: summary(t), args.repeat)
        worst_warm, worst_rebuild = max(worst_warm, warm), max(worst_rebuild, rebuild)
        print(f"{target_id:<15} {cold:8.1f} {cold2:9.1f} {rebuild:11.2f} {warm:9.4f} {size:10d} {summary_ms:11.2f}")
    print(f"worst warm load {worst_warm:.4f} ms, worst uncached rebuild {worst_rebuild:.2f} ms (goal ≤ 20 ms)")
    if args.svd:
        from rac_fw.domains.firmware.facts.svd_import import svd_from_path

        start = time.perf_counter()
        svd_from_path(args.svd)
        parse_ms = (time.perf_counter() - start) * 1000
        print(f"svd parse {args.svd.name}: {parse_ms:.0f} ms "
              f"(= {parse_ms / worst_rebuild:,.0f}x the slowest uncached pack load)")


if __name__ == "__main__":
    main()
