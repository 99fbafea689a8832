"""Length tuning for ``route_matched`` and ``diff_pair``: trombone bumps on the shorter nets.

A bump stands on a straight axis-parallel run: two legs :func:`dfm.meander_pitch` apart (centre to
centre), joined by a top, every corner a right angle, and no cell of it nearer the net's other copper
than that pitch — so the fab gets a same-net gap of at least width + clearance and the legs do not
couple into one lump (the verifier's ``dfm_same_net_gap`` counts what would).
"""

from __future__ import annotations

import math

import numpy as np

from rac_fw.domains.pcb.dfm import meander_pitch
from rac_fw.domains.pcb.route import GRID, Cell, Grid, Router


def tune(router: Router, nets: list[str], tolerance: float) -> dict[str, float]:
    """Lengthen the shorter nets with trombone bumps until each is within ``tolerance`` of the longest."""
    lengths = {n: router.routes[n].length() for n in nets if n in router.routes}
    if len(lengths) < 2:
        return lengths
    goal = max(lengths.values())
    for n in nets:
        if n not in router.routes:
            continue
        for _ in range(24):
            need = goal - router.routes[n].length()
            if need <= tolerance / 2:
                break
            if not _bump(router, n, need):
                break
        lengths[n] = router.routes[n].length()
    return lengths


def _bump(router: Router, net: str, need: float) -> bool:
    """Add one trombone bump to ``net``: two legs :func:`dfm.meander_pitch` apart, standing on a
    straight axis-parallel run, clear of the net's other copper by that pitch too (so no leg faces
    another closer than the clearance and every corner is a right angle)."""
    g = router.grid
    route = router.routes[net]
    s = max(2, math.ceil(meander_pitch(2 * g.hw, g.rules.clearance) / GRID - 1e-9))
    h_cells = max(1, min(8, int(round(need / (2 * GRID)))))
    g.remove_route(net)
    open_t, _, _ = router.open_masks(router.specs[net], soft=False)
    cells = {layer: np.array([(c[1], c[2]) for p in route.paths for c in p if c[0] == layer], float).reshape(-1, 2)
             for layer in range(g.nl)}  # the net's copper per layer, before this bump
    done = False
    for h in range(h_cells, 0, -1):  # the tallest bump that fits anywhere, lower ones otherwise
        for path in route.paths:
            for i in range(1, len(path) - s - 1):
                new = _bump_cells(g, path, i, s, h, cells, open_t)
                if new is not None:
                    path[i + 1:i + s] = new
                    done = True
                    break
            if done:
                break
        if done:
            break
    g.add_route(net, route)
    return done


def _bump_cells(g: Grid, path: list[Cell], i: int, s: int, h: int, cells: dict[int, np.ndarray],
                open_t: np.ndarray) -> list[Cell] | None:
    """The cells replacing ``path[i+1:i+s]`` by a bump of height ``h`` standing on ``path[i]`` and
    ``path[i+s]``, or None when the run is not straight there or the bump does not fit."""
    run = path[i - 1:i + s + 2]
    layer = run[0][0]
    dy, dx = run[1][1] - run[0][1], run[1][2] - run[0][2]
    if dy and dx or any(c[0] != layer or (c[1] - p[1], c[2] - p[2]) != (dy, dx)
                        for p, c in zip(run, run[1:], strict=False)):
        return None
    a, b = path[i], path[i + s]
    plane = g.nx * g.ny
    mine: np.ndarray | None = None
    for sgn in (1, -1):
        py, px = dx * sgn, dy * sgn
        new = [(layer, a[1] + py * k, a[2] + px * k) for k in range(1, h + 1)]
        new += [(layer, a[1] + py * h + dy * j, a[2] + px * h + dx * j) for j in range(1, s)]
        new += [(layer, b[1] + py * k, b[2] + px * k) for k in range(h, 0, -1)]
        if not all(0 <= c[1] < g.ny and 0 <= c[2] < g.nx and open_t[c[0] * plane + c[1] * g.nx + c[2]]
                   for c in new):
            continue
        if mine is None:  # the net's other cells, except those on the run's own line (the bump's feet)
            arr = cells[layer]
            mine = arr[(dx * (arr[:, 0] - a[1]) - dy * (arr[:, 1] - a[2])) != 0]
        pts = np.array([(c[1], c[2]) for c in new], float)
        if mine.size and (np.hypot(pts[:, None, 0] - mine[None, :, 0], pts[:, None, 1] - mine[None, :, 1])
                          < s - 1e-9).any():
            continue
        return new
    return None
