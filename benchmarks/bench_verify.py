"""Static verifier speed. Budget share (issue 4): plan → lowered → verified ≤ 100 ms warm, cold ≤ 1.5 s.

For each realistic good project in ``tests/bad_sources/*/good*`` it prints:
- cold: a fresh interpreter importing the verifier and judging the project once (imports, catalog and
  rules loading, tree-sitter parse, all checks), ms;
- warm: median of ``verify_sources`` in the same process afterwards, ms;
- files / lines judged, and the warm time as a fraction of the 100 ms warm pipeline budget.

    python benchmarks/bench_verify.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rac_fw.domains.firmware.verify.artifact import verify_sources

ROOT = Path(__file__).resolve().parents[1] / "tests" / "bad_sources"
WARM_BUDGET_MS = 100.0

COLD = """
import sys, time
from pathlib import Path
start = time.perf_counter()
from rac_fw.domains.firmware.verify.artifact import verify_sources
root = Path(sys.argv[1])
files = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob('*')) if p.is_file()}
verify_sources(files, sys.argv[2], None)
print((time.perf_counter() - start) * 1000)
"""


def _project(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"{'project':28} {'files':>5} {'lines':>6} {'cold ms':>8} {'warm ms':>8} {'of budget':>9}")
    for directory in sorted(ROOT.glob("*/good*")):
        framework = directory.parent.name
        files = _project(directory)
        lines = sum(text.count("\n") for text in files.values())
        cold_out = subprocess.run(
            [sys.executable, "-c", COLD, str(directory), framework], capture_output=True, text=True, check=True
        )
        cold = float(cold_out.stdout.strip())
        verify_sources(files, framework, None)
        samples = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            verify_sources(files, framework, None)
            samples.append((time.perf_counter() - start) * 1000)
        warm = statistics.median(samples)
        name = f"{framework}/{directory.name}"
        print(f"{name:28} {len(files):5d} {lines:6d} {cold:8.1f} {warm:8.2f} {warm / WARM_BUDGET_MS:9.1%}")


if __name__ == "__main__":
    main()
