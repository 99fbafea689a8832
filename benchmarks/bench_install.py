"""Install size: a fresh virtual environment with ``pip install .`` (the core), then one per extra.

Run: ``python benchmarks/bench_install.py [--extras scheduling,pcb,eval,ray,bench] [--python python3]``.
For the core and each extra it creates a new venv under a temporary directory, installs this checkout
(``pip install .`` / ``pip install '.[EXTRA]'``, the pip cache allowed), and prints the environment's
size on disk, what the extra adds over the core, the install's wall time and the largest packages.
Goal: the core ≤ 200 MB. It asserts nothing: the numbers are the result.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_CORE_MB = 200.0
MB = 1_000_000


def size_of(path: Path) -> int:
    """Bytes of the files under ``path`` (symlinks not followed)."""
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def allocated(path: Path) -> int:
    """Bytes the file system allocates for ``path`` (what ``du`` counts: blocks, directories included)."""
    return sum(p.lstat().st_blocks * 512 for p in [path, *path.rglob("*")])


def largest(venv: Path, count: int = 6) -> list[tuple[str, int]]:
    site = next(venv.glob("lib/python3*/site-packages"))
    sizes = [(p.name, size_of(p) if p.is_dir() else p.stat().st_size) for p in site.iterdir()
             if not p.name.endswith((".dist-info", ".pth"))]
    return sorted(sizes, key=lambda item: -item[1])[:count]


def install(python: str, spec: str, where: Path) -> tuple[int, int, float, list[tuple[str, int]]]:
    """(venv bytes, allocated bytes, install seconds, largest packages) of a fresh venv holding ``spec``."""
    venv = where / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    t0 = time.perf_counter()
    run = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          spec], cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"pip install {spec} failed:\n{run.stdout}{run.stderr}")
    return size_of(venv), allocated(venv), seconds, largest(venv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extras", default="scheduling,pcb,eval,ray,bench")
    parser.add_argument("--python", default=sys.executable, help="interpreter the venvs are made from")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rac-fw-install-") as tmp:
        base = Path(tmp)
        (base / "core").mkdir()
        core, on_disk, seconds, top = install(args.python, ".", base / "core")
        print(f"core  `pip install .`: {core / MB:7.1f} MB of files, {on_disk / MB:.1f} MB allocated (du), "
              f"in {seconds:5.1f} s (goal ≤ {GOAL_CORE_MB:.0f} MB: {max(core, on_disk) / MB / GOAL_CORE_MB:.2f} of it)")
        print("      largest: " + ", ".join(f"{name} {size / MB:.0f}" for name, size in top))
        for extra in [e for e in args.extras.split(",") if e]:
            (base / extra).mkdir()
            total, total_disk, seconds, top = install(args.python, f".[{extra}]", base / extra)
            print(f"[{extra}]: {total / MB:7.1f} MB of files ({total_disk / MB:.1f} MB allocated) in {seconds:5.1f} s, "
                  f"+{(total - core) / MB:.1f} MB over the core")
            print("      largest: " + ", ".join(f"{name} {size / MB:.0f}" for name, size in top))


if __name__ == "__main__":
    main()
