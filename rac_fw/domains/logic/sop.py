"""A minimal sum of products for a function of at most eight inputs (Quine–McCluskey, then a cover).

Why our own: the logic realizer needs one two-level form per output, and SymPy (80 MB) was a core
dependency only for ``SOPform``. This does the same job — prime implicants by merging cubes, the
essential ones, then the fewest further primes (fewest literals among equals) that cover the rest,
found by branch and bound (the cyclic cores of ≤ 8-input functions are small) — and
``tests/test_logic.py`` checks it against SymPy on every design and on random functions.

Inside, a cube is ``(value, free)``: ``free`` has a bit set for each absent input, ``value`` the
input bits of the rest; a set of rows is an int with bit ``r`` set for row ``r``. Out, a cube is a
tuple of one entry per input, most significant first (the row index's bit order): 1 (the input), 0 (its
complement) or None (absent).
"""

from __future__ import annotations

from collections.abc import Sequence

Cube = tuple[int | None, ...]
_Cube = tuple[int, int]

#: Branch-and-bound nodes explored before the cover keeps the best found so far (it bounds the work on
#: an adversarial 8-input function; the shipped designs and SymPy's test functions need far fewer).
MAX_NODES = 200


def prime_implicants(width: int, rows: Sequence[int]) -> list[_Cube]:
    """Every prime implicant of the function that is 1 on ``rows``: cubes merged while two differ in
    one present input (only cubes with the same absent inputs and one more 1 can merge)."""
    current = {(r, 0) for r in rows}
    primes: set[_Cube] = set()
    while current:
        groups: dict[tuple[int, int], list[int]] = {}
        for value, free in current:
            groups.setdefault((free, value.bit_count()), []).append(value)
        merged: set[_Cube] = set()
        used: set[_Cube] = set()
        for (free, ones), values in groups.items():
            above = groups.get((free, ones + 1), ())
            for a in values:
                for b in above:
                    diff = a ^ b
                    if diff & (diff - 1) == 0 and diff & b:  # one input, 0 in a and 1 in b
                        merged.add((a, free | diff))
                        used.update(((a, free), (b, free)))
        primes |= current - used
        current = merged
    return sorted(primes, key=lambda c: (c[1], c[0]))


def _rows_of(cube: _Cube, width: int, wanted: int) -> int:
    value, free = cube
    return sum(1 << r for r in range(1 << width) if (r & ~free) == value) & wanted


def _literals(cube: _Cube, width: int) -> int:
    return width - cube[1].bit_count()


def minimal_cover(width: int, rows: Sequence[int]) -> list[Cube]:
    """The products of a minimal sum for the function that is 1 exactly on ``rows``: all rows gives
    ``[(None,)*width]`` (the constant 1), no rows gives ``[]`` (the constant 0)."""
    wanted_rows = sorted(set(rows))
    if not wanted_rows:
        return []
    wanted = sum(1 << r for r in wanted_rows)
    primes = prime_implicants(width, wanted_rows)
    cover = {p: _rows_of(p, width, wanted) for p in primes}
    chosen = _cover(wanted, primes, cover, width)
    return sorted((_public(c, width) for c in chosen), key=lambda c: tuple(2 if v is None else v for v in c))


def _public(cube: _Cube, width: int) -> Cube:
    value, free = cube
    bits = [width - 1 - i for i in range(width)]
    return tuple(None if free >> b & 1 else value >> b & 1 for b in bits)


def _cover(wanted: int, primes: list[_Cube], cover: dict[_Cube, int], width: int) -> list[_Cube]:
    """The cheapest (fewest products, then fewest literals) set of primes covering ``wanted``.

    Each node of a branch and bound first reduces the prime-implicant table until nothing changes —
    take each prime that alone covers some row (essential), drop each prime another covers at least as
    well for no more literals (dominated) — then branches on the row with the fewest candidates, the
    prime covering most first. It starts from the reduce-then-greedy cover (:meth:`_Table.greedy`) and
    can only improve on it.
    """
    table = _Table(primes, cover, width)
    best = table.greedy(wanted, (1 << len(primes)) - 1)
    best_cost = table.cost(best)
    nodes = 0

    def search(remaining: int, alive: int, picked: list[int]) -> None:
        nonlocal best, best_cost, nodes
        nodes += 1
        remaining, alive, picked = table.reduce(remaining, alive, picked)
        if not remaining:
            if table.cost(picked) < best_cost:
                best, best_cost = picked, table.cost(picked)
            return
        columns = _bits(alive)
        largest = max((table.cols[i] & remaining).bit_count() for i in columns)
        if len(picked) + -(-remaining.bit_count() // largest) > best_cost[0] or nodes > MAX_NODES:
            return
        row = min(_bits(remaining), key=lambda r: ((table.rows[r] & alive).bit_count(), r))
        options = _bits(table.rows[row] & alive)
        for i in sorted(options, key=lambda i: (-(table.cols[i] & remaining).bit_count(), table.size[i], i)):
            search(remaining & ~table.cols[i], alive & ~(1 << i), [*picked, i])

    search(wanted, (1 << len(primes)) - 1, [])
    return [primes[i] for i in best]


class _Table:
    """The prime-implicant table as bitmasks: ``cols[i]`` the rows prime ``i`` covers, ``rows[r]`` the
    primes covering row ``r``."""

    def __init__(self, primes: list[_Cube], cover: dict[_Cube, int], width: int):
        self.cols = [cover[p] for p in primes]
        self.size = [_literals(p, width) for p in primes]
        self.rows: dict[int, int] = {}
        for i, col in enumerate(self.cols):
            for r in _bits(col):
                self.rows[r] = self.rows.get(r, 0) | 1 << i

    def cost(self, picked: list[int]) -> tuple[int, int]:
        return len(picked), sum(self.size[i] for i in picked)

    def greedy(self, remaining: int, alive: int) -> list[int]:
        """Reduce, take the prime covering most of what is left (fewest literals among equals), repeat:
        SymPy's strategy, the search's first bound."""
        picked: list[int] = []
        while True:
            remaining, alive, picked = self.reduce(remaining, alive, picked)
            if not remaining:
                return picked
            i = min(_bits(alive), key=lambda i: (-(self.cols[i] & remaining).bit_count(), self.size[i], i))
            picked = [*picked, i]
            remaining &= ~self.cols[i]
            alive &= ~(1 << i)

    def reduce(self, remaining: int, alive: int, picked: list[int]) -> tuple[int, int, list[int]]:
        """Essential primes taken and dominated primes dropped until nothing changes."""
        changed = True
        while changed and remaining:
            changed = False
            for r in _bits(remaining):
                holders = self.rows[r] & alive
                if remaining >> r & 1 and holders and holders & (holders - 1) == 0:
                    i = holders.bit_length() - 1
                    picked = [*picked, i]
                    remaining &= ~self.cols[i]
                    alive &= ~holders
                    changed = True
            # Larger covers first: a prime can only be dominated by one covering at least as many rows.
            covered = {i: self.cols[i] & remaining for i in _bits(alive)}
            order = sorted(covered, key=lambda i: (-covered[i].bit_count(), self.size[i], i))
            kept: list[int] = []
            for i in order:
                mine = covered[i]
                if not mine or any(mine & ~covered[j] == 0 and self.size[j] <= self.size[i] for j in kept):
                    alive &= ~(1 << i)
                    changed = True
                else:
                    kept.append(i)
        return remaining, alive, picked


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
