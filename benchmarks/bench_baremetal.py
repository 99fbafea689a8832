"""Bare-metal build and run speed, and flash/RAM use per example. Goals (issue 5): compile + link ≤ 1 s
per example, QEMU run to verdict ≤ 1 s, unchanged-plan rebuild (cache hit) ≤ 50 ms.

For every example whose operations the baremetal framework realizes, on every Cortex-M target whose
obligations accept it, it prints:
- lower: plan → source tree (warm process), ms;
- build: arm-none-eabi-gcc compile + link into an empty cache (one compiler process), ms;
- hit: the same build again (cache hit: hash the tree, copy the ELF), ms;
- run: QEMU boot to console verdict and semihosting exit (targets with a QEMU machine), ms, and the
  verdict (QEMU 7.2 does not model the F4's ADC conversion flags, DMA or general-purpose timers: those
  examples end in the firmware's own bounded-timeout FAIL line, which is the honest result);
- flash / RAM: bytes used per region from the ELF.

    python benchmarks/bench_baremetal.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from rac_fw.domains.firmware.backends.base import BuildRequest, RunRequest
from rac_fw.domains.firmware.backends.gcc import GccBuilder
from rac_fw.domains.firmware.backends.qemu import QemuRunner
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import lower, write_artifact
from rac_fw.domains.firmware.obligations import check
from rac_fw.domains.firmware.obligations.frameworks import FRAMEWORKS
from rac_fw.domains.firmware.plan.load import load_plan
from rac_fw.domains.firmware.verify.console import plan_expectations
from rac_fw.resources import data_dir

TARGETS = ("stm32f407", "stm32h743", "nrf52840")
GOALS_MS = {"build": 1000.0, "run": 1000.0, "hit": 50.0}


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    supported = FRAMEWORKS["baremetal"].operations
    worst = {"build": 0.0, "run": 0.0, "hit": 0.0}
    header = f"{'example':<16} {'target':<10} {'lower':>7} {'build':>7} {'hit':>6} {'run':>6}  memory"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path in sorted(data_dir("examples").glob("*.yaml")):
            plan = load_plan(path)
            if not all(op.op in supported for op in plan.operations):
                continue
            for target_id in TARGETS:
                target = load_target(target_id)
                retargeted = plan.model_copy(update={"target": target_id, "framework": "baremetal"})
                if check(retargeted, target, "baremetal"):
                    continue
                lowers, builds, hits, runs = [], [], [], []
                verdict = ""
                for attempt in range(args.repeat):
                    work = root / f"{path.stem}-{target_id}-{attempt}"
                    os.environ["RAC_FW_CACHE"] = str(work / "cache")
                    start = time.perf_counter()
                    lowered = lower(retargeted, target, "baremetal")
                    lowers.append(_ms(start))
                    write_artifact(lowered, work / "src")
                    request = BuildRequest(work / "src", target_id, "baremetal", work / "build")
                    start = time.perf_counter()
                    built = GccBuilder().build(request)
                    builds.append(_ms(start))
                    assert built.ok and not built.cached, [e.message for e in built.evidence]
                    start = time.perf_counter()
                    again = GccBuilder().build(request)
                    hits.append(_ms(start))
                    assert again.cached
                    if target.qemu is not None and target.board.console:
                        expect = plan_expectations(retargeted, target.board.console.uart)
                        start = time.perf_counter()
                        ran = QemuRunner().run(RunRequest(built.image, target_id, expect, 10.0, work / "run"))
                        runs.append(_ms(start))
                        verdict = "pass" if ran.ok else "FAIL: " + ran.evidence[0].message.split(";")[0]
                medians = {
                    "build": statistics.median(builds),
                    "hit": statistics.median(hits),
                    "run": statistics.median(runs) if runs else 0.0,
                }
                for key, value in medians.items():
                    worst[key] = max(worst[key], value)
                memory = ", ".join(f"{r.region} {r.used} B ({r.percent:.2f} %)" for r in built.regions)
                run_text = f"{medians['run']:6.0f}" if runs else f"{'-':>6}"
                print(
                    f"{path.stem:<16} {target_id:<10} {statistics.median(lowers):7.1f} {medians['build']:7.0f} "
                    f"{medians['hit']:6.1f} {run_text}  {memory}"
                )
                if verdict:
                    print(f"{'':<27} qemu verdict: {verdict}")
    print()
    for key, goal in GOALS_MS.items():
        print(f"worst {key}: {worst[key]:.1f} ms, goal {goal:.0f} ms, ratio {worst[key] / goal:.2f}")


if __name__ == "__main__":
    main()
