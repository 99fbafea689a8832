"""The logic realizer's own sum-of-products minimiser (it replaced SymPy's ``SOPform``): it realizes
exactly the stated rows, it is minimal where minimality can be checked exhaustively, and it never needs
more products or literals than SymPy on the shipped designs and on random functions (up to 6 inputs
here; ``benchmarks/bench_logic_sop.py`` compares up to 8 and times both)."""

from __future__ import annotations

import itertools
import random

import pytest

from rac_fw.domains.logic.sop import Cube, minimal_cover, prime_implicants
from rac_fw.domains.logic.tasks import all_tasks, get_task


def covers(cube: Cube, row: int) -> bool:
    width = len(cube)
    return all(v is None or v == (row >> (width - 1 - i)) & 1 for i, v in enumerate(cube))


def cost(cubes: list[Cube]) -> tuple[int, int]:
    """(products, literals); the constants cost nothing."""
    if not cubes or all(v is None for v in cubes[0]):
        return 0, 0
    return len(cubes), sum(v is not None for c in cubes for v in c)


def functions() -> list[tuple[str, int, list[int]]]:
    """Every output of every shipped design, and random functions of 3 to 8 inputs (seeded)."""
    found = []
    for name in sorted(all_tasks()):
        task = get_task(name)
        for out in task.outputs:
            found.append((f"{name}.{out}", len(task.inputs), [r for r in range(task.rows) if task.expected(out, r)]))
    rng = random.Random(29)
    for width in range(3, 9):
        for k in range(12 if width < 7 else 4):
            density = (0.2, 0.5, 0.8)[k % 3]
            found.append((f"random{width}.{k}", width, [r for r in range(1 << width) if rng.random() < density]))
    return found


FUNCTIONS = functions()


@pytest.mark.parametrize(("name", "width", "rows"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_the_cover_is_one_exactly_on_the_stated_rows(name: str, width: int, rows: list[int]) -> None:
    cubes = minimal_cover(width, rows)
    assert [r for r in range(1 << width) if any(covers(c, r) for c in cubes)] == sorted(rows)


def test_constants_and_a_single_literal() -> None:
    assert minimal_cover(3, []) == []
    assert minimal_cover(3, range(8)) == [(None, None, None)]
    assert minimal_cover(3, [4, 5, 6, 7]) == [(1, None, None)]
    assert minimal_cover(2, [0, 3]) == [(0, 0), (1, 1)]


def test_minimal_for_every_function_of_three_inputs() -> None:
    """All 256 functions: no subset of the primes covers with fewer products (or, as many, fewer literals)."""
    for bits in range(256):
        rows = [r for r in range(8) if bits >> r & 1]
        found = cost(minimal_cover(3, rows))
        primes = [tuple(None if free >> (2 - i) & 1 else value >> (2 - i) & 1 for i in range(3))
                  for value, free in prime_implicants(3, rows)]
        best = (0, 0) if not rows or len(rows) == 8 else min(
            cost(list(subset)) for k in range(1, len(primes) + 1) for subset in itertools.combinations(primes, k)
            if all(any(covers(c, r) for c in subset) for r in rows))
        assert found == best, (rows, found, best)


def test_never_larger_than_sympy() -> None:
    import sympy  # in the dev extra (CI installs it); the realizer itself never imports it
    from sympy.logic import SOPform
    from sympy.logic.boolalg import And, BooleanFalse, BooleanTrue, Or

    def sympy_cost(expr: object) -> tuple[int, int]:
        if isinstance(expr, BooleanTrue | BooleanFalse):
            return 0, 0
        terms = expr.args if isinstance(expr, Or) else (expr,)  # type: ignore[attr-defined]
        return len(terms), sum(len(t.args) if isinstance(t, And) else 1 for t in terms)

    better = 0
    compared = [f for f in FUNCTIONS if f[1] <= 6]  # SymPy needs up to 18 s for one dense 8-input function
    for name, width, rows in compared:
        ours = cost(minimal_cover(width, rows))
        theirs = sympy_cost(SOPform(sympy.symbols(f"x0:{width}"), rows))
        assert ours <= theirs, (name, ours, theirs)
        better += ours < theirs
    print(f"{len(compared)} functions: never larger than SymPy's SOPform, smaller on {better}")
