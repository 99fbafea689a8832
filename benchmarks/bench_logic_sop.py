"""The logic realizer's own minimiser against SymPy's ``SOPform`` (which it replaced as a core dependency).

Run: ``python benchmarks/bench_logic_sop.py`` (needs ``sympy``, in the dev extra). For every output of
the shipped designs and 209 seeded random functions of 3–8 inputs it prints how often ours needs fewer,
as many or more (products, literals) than SymPy, and the time each took in total and at worst. It
asserts nothing: the numbers are the result.
"""

from __future__ import annotations

import random
import time

import sympy
from sympy.logic import SOPform
from sympy.logic.boolalg import And, BooleanFalse, BooleanTrue, Or

from rac_fw.domains.logic.sop import Cube, minimal_cover
from rac_fw.domains.logic.tasks import all_tasks, get_task


def ours_cost(cubes: list[Cube]) -> tuple[int, int]:
    if not cubes or all(v is None for v in cubes[0]):
        return 0, 0
    return len(cubes), sum(v is not None for c in cubes for v in c)


def sympy_cost(expr: object) -> tuple[int, int]:
    if isinstance(expr, BooleanTrue | BooleanFalse):
        return 0, 0
    terms = expr.args if isinstance(expr, Or) else (expr,)  # type: ignore[attr-defined]
    return len(terms), sum(len(t.args) if isinstance(t, And) else 1 for t in terms)


def functions() -> list[tuple[int, list[int]]]:
    found = []
    for name in sorted(all_tasks()):
        task = get_task(name)
        found += [(len(task.inputs), [r for r in range(task.rows) if task.expected(out, r)]) for out in task.outputs]
    rng = random.Random(0)
    for width in range(3, 9):
        for _ in range(40 if width < 7 else 15):
            density = rng.choice((0.2, 0.5, 0.8))
            found.append((width, [r for r in range(1 << width) if rng.random() < density]))
    return found


def main() -> None:
    counts = {"fewer": 0, "as many": 0, "more": 0}
    times = {"ours": [0.0, 0.0], "sympy": [0.0, 0.0]}  # total, worst
    for width, rows in functions():
        t0 = time.perf_counter()
        ours = ours_cost(minimal_cover(width, rows))
        t1 = time.perf_counter()
        theirs = sympy_cost(SOPform(sympy.symbols(f"x0:{width}"), rows))
        t2 = time.perf_counter()
        counts["fewer" if ours < theirs else "more" if ours > theirs else "as many"] += 1
        for who, spent in (("ours", t1 - t0), ("sympy", t2 - t1)):
            times[who][0] += spent
            times[who][1] = max(times[who][1], spent)
    total = sum(counts.values())
    print(f"{total} functions (shipped designs + random, 3–8 inputs), ours vs SymPy SOPform in (products, literals):")
    print("  " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for who, (spent, worst) in times.items():
        print(f"  {who:<6} total {spent:7.2f} s, worst function {worst:6.2f} s")
    print(f"  time ratio ours/sympy: {times['ours'][0] / times['sympy'][0]:.3f}")


if __name__ == "__main__":
    main()
