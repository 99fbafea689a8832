"""Cold start of the command line: a new process per run, as an agent or a shell calls it.

Run: ``python benchmarks/bench_startup.py [--runs 9] [--rac-fw PATH]`` (default: ``python -m rac_fw.cli``
with this interpreter; give an installed ``rac-fw`` script to time that). For ``rac-fw --help``,
``rac-fw plan --help`` and ``rac-fw plan examples/uart_hello.yaml --target stm32f407 --framework
baremetal`` it prints the median wall and CPU seconds of the runs, next to two yardsticks measured in the
same runs, interleaved: the bare interpreter (``python -c pass``) and a bare Typer app with as many
commands (its ``--help``: the floor any Typer CLI pays). Goals: ``--help`` ≤ 0.3 s, ``plan`` ≤ 0.5 s,
compared with the CPU time (user + system), which is the wall time of an idle machine for these
single-threaded starts and stays meaningful when other work shares the cores (the wall time is printed
too, with the load average).
Bytecode is written and one warm-up run precedes the timed ones, so "cold" means a new interpreter with
the disk caches an installed package has (pip compiles on install). It asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOALS = {"--help": 0.3, "plan": 0.5}
BARE_TYPER = """
import typer
app = typer.Typer(no_args_is_help=True, add_completion=False)
for i in range({count}):
    def command(x: str = "a") -> None:
        '''Do one thing.'''
    app.command(f"c{{i}}")(command)
app()
"""


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``argv`` (cpu: the child's user + system time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--rac-fw", help="an installed rac-fw script (default: this interpreter -m rac_fw.cli)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if args.rac_fw is None:  # this checkout's code, whatever this interpreter has installed
        env["PYTHONPATH"] = str(REPO)
    else:  # the installed script and its own package
        env.pop("PYTHONPATH", None)
    rac_fw = [args.rac_fw] if args.rac_fw else [sys.executable, "-m", "rac_fw.cli"]
    with tempfile.TemporaryDirectory(prefix="rac-fw-startup-") as tmp:
        cwd = Path(tmp)
        listed = subprocess.run([*rac_fw, "--help"], env=env, cwd=cwd, capture_output=True, text=True, check=True)
        commands = sum(1 for line in listed.stdout.splitlines() if line.startswith("│ ") and line[2:3].isalpha())
        bare = cwd / "bare_typer.py"
        bare.write_text(BARE_TYPER.format(count=max(commands, 1)))
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            f"bare Typer app --help ({commands} commands)": [sys.executable, str(bare), "--help"],
            "rac-fw --help": [*rac_fw, "--help"],
            "rac-fw plan --help": [*rac_fw, "plan", "--help"],
            "rac-fw plan uart_hello (baremetal)": [*rac_fw, "plan", str(REPO / "examples" / "uart_hello.yaml"),
                                                   "--target", "stm32f407", "--framework", "baremetal"],
        }
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for argv in cases.values():  # warm-up: bytecode written, page cache filled
            timed(argv, env, cwd)
        for _ in range(args.runs):
            for name, argv in cases.items():
                samples[name].append(timed(argv, env, cwd))
    print(f"cold start, median of {args.runs} runs each (interleaved), {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}:")
    medians = {name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for name, runs in samples.items()}
    floor = medians[next(n for n in cases if n.startswith("bare Typer"))]
    for name, (wall, cpu) in medians.items():
        goal = next((g for key, g in GOALS.items() if name == f"rac-fw {key}" or name.startswith(f"rac-fw {key} ")),
                    None)
        extra = f"  goal ≤ {goal} s: cpu {cpu / goal:.2f} of it" if goal else ""
        print(f"  {name:<40} cpu {cpu:6.3f} s  wall {wall:6.3f} s  cpu ×{cpu / floor[1]:5.2f} the bare Typer app"
              f"{extra}")


if __name__ == "__main__":
    main()
