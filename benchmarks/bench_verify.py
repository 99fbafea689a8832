"""Static verifier speed. Budget share (issue 4): plan → lowered → verified ≤ 100 ms warm, cold ≤ 1.5 s.

Two kinds of project are judged: the hand-written good projects in ``tests/bad_sources/*/good*`` (no target
facts) and real artifacts lowered from ``examples/`` (with their target's facts; the bare-metal one carries
the generated ~5,000-line ``device.h``). For each it prints:
- cold: median over fresh interpreters that have already imported what any ``rac-fw plan`` imports (the contract,
  the target facts), then imports the verifier and judges the project once (verifier imports, catalog and
  rules loading, tree-sitter parse, all checks), ms;
- warm: median of ``verify_sources`` on the same files in the same process afterwards, ms;
- warm, changed: median when every C file differs from all earlier runs (nothing reused from the
  per-file memo: what an agent's next, edited plan costs), ms;
- files / lines judged, and the changed-warm time as a fraction of the 100 ms warm pipeline budget.

Measure with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` unset): otherwise every cold run also
compiles the verifier's sources.

    python benchmarks/bench_verify.py [--repeat 20] [--cold-runs 5] [--artifacts DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.verify.artifact import verify_sources

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "bad_sources"
WARM_BUDGET_MS = 100.0

#: Real artifacts: (example, target, framework).
LOWERED = (
    ("uart_hello", "stm32f407", "baremetal"),
    ("dma_h7_cache", "stm32h743", "hal"),
    ("adc_dt", "nrf52840", "zephyr"),
    ("dma_h7_cache", "stm32h743", "zephyr"),
    ("uart_echo", "esp32s3", "espidf"),
)

COLD = """
import sys, time
from pathlib import Path
from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.load import load_target
target = load_target(sys.argv[3]) if sys.argv[3] != "-" else None
root = Path(sys.argv[1])
files = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob('*')) if p.is_file()}
start = time.perf_counter()
from rac_fw.domains.firmware.verify.artifact import verify_sources
verify_sources(files, sys.argv[2], target)
print((time.perf_counter() - start) * 1000)
"""


def _project(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


def _lower_examples(out: Path) -> None:
    """Write the ``LOWERED`` artifacts under ``out/<example>-<target>-<framework>/`` (absent ones only)."""
    from rac_fw.domains.firmware.lower import lower
    from rac_fw.domains.firmware.plan.load import load_plan
    from rac_fw.resources import data_dir

    for example, target_id, framework in LOWERED:
        directory = out / f"{example}-{target_id}-{framework}"
        if directory.is_dir():
            continue
        plan = load_plan(data_dir("examples") / f"{example}.yaml")
        plan = plan.model_copy(update={"target": target_id, "framework": framework})
        for path, text in lower(plan, load_target(target_id), framework).files.items():
            (directory / path).parent.mkdir(parents=True, exist_ok=True)
            (directory / path).write_text(text)


def _warm_ms(files: dict[str, str], framework: str, target: Target | None, repeat: int) -> tuple[float, float]:
    """(median ms re-judging the same files, median ms when every C file is new to this process)."""
    verify_sources(files, framework, target)
    same, changed = [], []
    for index in range(repeat):
        start = time.perf_counter()
        verify_sources(files, framework, target)
        same.append((time.perf_counter() - start) * 1000)
        edited = _changed(files, index)
        start = time.perf_counter()
        verify_sources(edited, framework, target)
        changed.append((time.perf_counter() - start) * 1000)
    return statistics.median(same), statistics.median(changed)


def _changed(files: dict[str, str], index: int) -> dict[str, str]:
    return {p: t + f"\n/* bench {index} */\n" if p.endswith((".c", ".h")) else t for p, t in files.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cold-runs", type=int, default=5, help="fresh interpreters per project (median)")
    parser.add_argument("--artifacts", type=Path, help="keep (or reuse) the lowered example artifacts here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        artifacts = args.artifacts or Path(scratch)
        _lower_examples(artifacts)
        projects: list[tuple[Path, str, str | None]] = [(d, d.parent.name, None) for d in sorted(GOOD.glob("*/good*"))]
        for example, lowered_target, lowered_framework in LOWERED:
            directory = artifacts / f"{example}-{lowered_target}-{lowered_framework}"
            projects.append((directory, lowered_framework, lowered_target))
        print(f"{'project':38} {'files':>5} {'lines':>6} {'cold ms':>8} {'warm ms':>8} {'changed':>8} {'of budget':>9}")
        for directory, framework, target_id in projects:
            files = _project(directory)
            target = load_target(target_id) if target_id is not None else None
            lines = sum(text.count("\n") for path, text in files.items() if path.endswith((".c", ".h")))
            cold = statistics.median(
                float(
                    subprocess.run(
                        [sys.executable, "-c", COLD, str(directory), framework, target_id or "-"],
                        capture_output=True,
                        text=True,
                        check=True,
                        cwd=scratch,  # import rac_fw from where this process did, not from the cwd
                    ).stdout.strip()
                )
                for _ in range(args.cold_runs)
            )
            warm, changed = _warm_ms(files, framework, target, args.repeat)
            name = directory.name if target_id else f"{framework}/{directory.name}"
            print(
                f"{name:38} {len(files):5d} {lines:6d} {cold:8.1f} {warm:8.2f} {changed:8.2f} "
                f"{changed / WARM_BUDGET_MS:9.1%}"
            )


if __name__ == "__main__":
    main()
